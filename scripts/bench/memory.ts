/**
 * `npm run bench:memory` — Redis memory per dedup key for each marking protocol, and the capacity
 * projection's bytes/key estimate against it.
 *
 *   npm run bench:memory -- [--keys 500000] [--batch 1000] [--service billing] [--handler charge] [--topic demo.events] [--json out.json]
 *
 * On a private `redis-server` (random port, no persistence, stopped by pid — the shared Redis'
 * `used_memory` is not touched), for each variant — the markings lease, release, naive, and
 * `lease+position`: lease with Kafka-like positions (`--topic`, 6 partitions, 7-digit offsets), whose
 * keys end in `done:<topic>:<partition>:<offset>` (issue 13: the duplicate cause) instead of `done`:
 * 1. `FLUSHALL` (own server), read `INFO memory` `used_memory`;
 * 2. deliver `--keys` messages (ULID ids) through the real path — `Router.deliverBatch` → the
 *    Deduplicator middleware on a `RedisRepository` (TTL 24 h, the spec's default window) → a no-op
 *    handler — in batches of `--batch`. Lease keys end in `done#<payload fingerprint>`
 *    (`done:<topic>:<partition>:<offset>#<fingerprint>` with positions; their state after completion,
 *    checked); release keys hold `claimed:<token>`; naive keys hold `1`;
 * 3. read `used_memory` again: delta / keys = the measured bytes per key;
 * 4. run the dashboard's `KeyInspector` (what `/api/keys` and `/api/capacity` use) on the same
 *    server: its `bytesPerKey` (mean `MEMORY USAGE … SAMPLES 0` over its key sample plus the dict
 *    overhead `MEMORY USAGE` leaves out, from `MEMORY STATS`) is what the capacity projection
 *    multiplies projected keys by. Error = estimate / measured − 1. The line below it shows that
 *    overhead and what `MEMORY USAGE` alone would have given.
 * Targets (issue 9): |projection error| ≤ 10%; lease bytes/key ≤ 1.3 × naive bytes/key.
 */
import { Redis } from "ioredis";
import { startOwnRedis } from "@/server/testing/own-redis";
import { emitFigures, runMain } from "../lib/run";
import { measureVariant, type MarkingResult } from "./memory/measure";
import { BATCH, HANDLER, JSON_PATH, KEYS, OFFSET_BASE, PARTITIONS, SERVICE, TOPIC, VARIANTS } from "./memory/settings";

/** Every setup on a private redis-server (flushed between setups, stopped at the end). */
async function measureAll(): Promise<MarkingResult[]> {
  const srv = await startOwnRedis();
  const client = new Redis(srv.url, { maxRetriesPerRequest: 1 });
  const results: MarkingResult[] = [];
  try {
    const version = /redis_version:(\S+)/.exec(await client.info("server"))?.[1] ?? "?";
    const allocator = /mem_allocator:(\S+)/.exec(await client.info("memory"))?.[1] ?? "?";
    console.log(`  own redis-server ${version} (${allocator}) on port ${srv.port}, pid ${srv.pid}`);
    for (const v of VARIANTS) results.push(await measureVariant(client, v));
    await client.flushall();
  } finally {
    client.disconnect();
    await srv.stop();
  }
  return results;
}

/** The targets' lines and the rows of bench-results.json. */
function summarize(results: MarkingResult[]) {
  const by = (m: string) => results.find((r) => r.marking === m)!;
  const leaseVsNaive = by("lease").measuredBytesPerKey / by("naive").measuredBytesPerKey;
  const positionCost = by("lease+position").measuredBytesPerKey - by("lease").measuredBytesPerKey;
  const positionVsNaive = by("lease+position").measuredBytesPerKey / by("naive").measuredBytesPerKey;
  const err = by("lease").projectionError;
  const worst = Math.max(...results.map((r) => Math.abs(r.projectionError ?? Infinity)));
  console.log(
    `\ntargets: projection error (lease, done keys) ${err === null ? "n/a" : `${(100 * err).toFixed(1)}%`} (|·| ≤ 10%: ${err !== null && Math.abs(err) <= 0.1 ? "met" : "MISSED"}; worst marking ${(100 * worst).toFixed(1)}%);` +
      `  lease/naive bytes per key ${leaseVsNaive.toFixed(3)} (≤ 1.3: ${leaseVsNaive <= 1.3 ? "met" : "MISSED"})`,
  );
  console.log(
    `position in the done value (issue 13): lease ${by("lease").measuredBytesPerKey.toFixed(1)} → lease+position ${by("lease+position").measuredBytesPerKey.toFixed(1)} B/key` +
      ` (+${positionCost.toFixed(1)} B/key, ×${(by("lease+position").measuredBytesPerKey / by("lease").measuredBytesPerKey).toFixed(3)}; ×${positionVsNaive.toFixed(3)} naive)`,
  );
  const out = [
    {
      name: "redis.bytes_per_key_projection_error",
      value: err === null ? null : +err.toFixed(4),
      unit: "fraction",
      reference: +by("lease").measuredBytesPerKey.toFixed(1),
      ratio:
        by("lease").estimateBytesPerKey === null
          ? null
          : +(by("lease").estimateBytesPerKey! / by("lease").measuredBytesPerKey).toFixed(4),
      target: 0.1,
      detail: {
        worstMarking: +worst.toFixed(4),
        memoryUsageOnlyError:
          by("lease").memoryUsageOnlyError === null ? null : +by("lease").memoryUsageOnlyError!.toFixed(4),
      },
    },
    {
      name: "redis.lease_vs_naive_bytes_per_key",
      value: +leaseVsNaive.toFixed(4),
      unit: "ratio",
      reference: +by("naive").measuredBytesPerKey.toFixed(1),
      ratio: +leaseVsNaive.toFixed(4),
      target: 1.3,
    },
    {
      name: "redis.done_position_cost_bytes_per_key",
      value: +positionCost.toFixed(1),
      unit: "B/key",
      reference: +by("lease").measuredBytesPerKey.toFixed(1),
      ratio: +(by("lease+position").measuredBytesPerKey / by("lease").measuredBytesPerKey).toFixed(4),
      detail: {
        topic: TOPIC,
        partitions: PARTITIONS,
        offsetDigits: String(OFFSET_BASE).length,
        positionVsNaive: +positionVsNaive.toFixed(4),
      },
    },
    ...results.map((r) => ({
      name: `redis.bytes_per_key.${r.marking}`,
      value: +r.measuredBytesPerKey.toFixed(1),
      unit: "B/key",
      reference: r.estimateBytesPerKey,
      ratio: r.estimateBytesPerKey === null ? null : +(r.estimateBytesPerKey / r.measuredBytesPerKey).toFixed(4),
      detail: {
        keys: r.keys,
        key: `${SERVICE}:dedup:${HANDLER}:<ULID>`,
        memoryUsageOnlyBytesPerKey:
          r.memoryUsageOnlyBytesPerKey === null ? null : +r.memoryUsageOnlyBytesPerKey.toFixed(1),
        states: r.states,
      },
    })),
  ];
  return out;
}

async function main(): Promise<void> {
  console.log(
    `bench:memory  keys=${KEYS} batch=${BATCH} key = ${SERVICE}:dedup:${HANDLER}:<ULID>  ttl=24h  node ${process.version}  ${new Date().toISOString()}`,
  );
  const results = await measureAll();
  emitFigures(summarize(results), JSON_PATH);
}

runMain(main);
