/**
 * `npm run bench:scale` — what scaling out buys on this machine (issue 10), in one run:
 *
 * 1. Batch claims/s: `RedisRepository.claimBatch` on the standalone server (REDIS_URL, default
 *    127.0.0.1:6379; both its batch modes: one script call per batch, and one pipeline) against the
 *    3-master Redis Cluster (REDIS_CLUSTER_NODES, default 127.0.0.1:7000-7002: one pipeline per
 *    master per batch), alternating, for `--claim-seconds` each, at 1 and `--concurrency` batches
 *    in flight. Every claim is a new key under a random prefix (TTL 2 min, deleted after).
 * 2. Consumer messages/s with 1, 2 and 3 worker processes in ONE consumer group on a fresh
 *    6-partition topic: each worker is this script in `--worker` mode (the library's KafkaSubscriber
 *    → Router → defaultStack with the Deduplicator on Redis → a no-op handler). The workers join
 *    while the topic is empty (so no rebalance falls inside the measurement), the topic is then
 *    filled with `--messages` Watermill-format records while every worker waits at a gate, and the
 *    gate opens for all at once. messages/s = messages / (last message processed − gate opened).
 *    `--rounds` repeats 1,2,3 then 3,2,1… and the summary takes medians. Also printed: how busy the
 *    machine's cores were (/proc/stat), and the CPU each message cost in the workers and in the
 *    stack's own processes (Kafka broker, Redis masters: /proc/<pid>/stat of the pids
 *    scripts/stack.sh recorded), hence the 2-core ceiling = 2000 ms / (CPU ms per message): the
 *    rate at which the two cores are saturated, i.e. where adding workers bends.
 *
 *   npm run bench:scale -- [--json out.json] [--claim-seconds 3] [--batch 100] [--concurrency 4]
 *     [--messages 30000] [--workers 1,2,3] [--rounds 2] [--consumer-redis cluster|standalone]
 *     [--skip claims|consumers]
 *
 * Needs `npm run stack:up` (Redis, Kafka) and `npm run stack:cluster`. Deletes its topic, groups
 * and keys. Every worker process is stopped by its pid.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { arg, flag } from "../lib/args";
import { benchClaims } from "./scale/claims";
import { benchConsumers, consumerSummary } from "./scale/consumers";
import { worker } from "./scale/workers";

export { startWorker, stopWorker } from "./scale/workers";

async function main(): Promise<void> {
  if (flag("worker")) return worker();
  const skip = arg("skip", "");
  const json = arg("json", "");
  const load0 = loadavg()[0]!;
  const claims = skip === "claims" ? [] : await benchClaims();
  const consumers = skip === "consumers" ? [] : await benchConsumers();
  if (claims.length) {
    const by = (name: string, c: number) =>
      claims.find((f) => f.target.startsWith(name) && f.concurrency === c)?.claimsPerSecond ?? 0;
    const cMax = Math.max(...claims.map((f) => f.concurrency));
    for (const c of [...new Set([1, cMax])]) {
      console.log(
        `[claims] cluster / standalone-script at ${c} in flight: ${(by("cluster", c) / Math.max(1, by("standalone (script", c))).toFixed(2)}; cluster / standalone-pipeline: ${(by("cluster", c) / Math.max(1, by("standalone (pipeline", c))).toFixed(2)}`,
      );
    }
  }
  const summary = consumerSummary(consumers);
  if (summary.length > 1) {
    const base = summary[0]!;
    for (const f of summary) {
      const speedup = f.messagesPerSecond / Math.max(1, base.messagesPerSecond);
      console.log(
        `[consumers] median of ${f.rounds} round(s), ${f.workers} worker(s): ${f.messagesPerSecond.toLocaleString("en")} msg/s, ×${speedup.toFixed(2)} vs ${base.workers} ` +
          `(linear ×${(f.workers / base.workers).toFixed(2)}); cores busy ${(f.machineBusy * 100).toFixed(0)}%; 2-core ceiling ≈ ${f.twoCoreCeiling.toLocaleString("en")} msg/s`,
      );
    }
  }
  console.log(
    `[bench-scale] load average 1 min: ${load0.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end (2 cores, shared)`,
  );
  if (json) {
    writeFileSync(
      json,
      JSON.stringify(
        {
          generatedAt: new Date().toISOString(),
          claims,
          consumers,
          consumerSummary: summary,
          loadAverage: { start: load0, end: loadavg()[0] },
        },
        null,
        2,
      ),
    );
    console.log(`[bench-scale] wrote ${json}`);
  }
}

if (require.main === module) {
  main().then(
    () => {
      if (!flag("worker")) process.exit(0);
    },
    (e: unknown) => {
      console.error(`[bench-scale] ${(e as Error)?.stack ?? e}`);
      process.exit(1);
    },
  );
}
