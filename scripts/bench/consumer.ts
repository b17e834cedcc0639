/**
 * `npm run bench:consumer` — end-to-end consumer throughput on the local Kafka broker: our Kafka
 * subscriber + the default middleware stack + the Redis Deduplicator against raw kafkajs, in the
 * same run, alternating, so that the machine's noise falls on both alike.
 *
 *   npm run bench:consumer -- [--messages 500000] [--partitions 6] [--rounds 3] [--size 200]
 *     [--variants raw,ours] [--brokers 127.0.0.1:9092] [--redis redis://127.0.0.1:6379]
 *     [--own-redis] [--concurrency 3] [--chunk 100] [--commit-interval 0] [--round-timeout 180] [--json out.json]
 *     [--profile <dir>]   (V8 CPU profile of the LAST round's consumes, <dir>/<variant>-r<round>.cpuprofile;
 *                          the per-area split goes into the JSON detail)
 *   npm run bench:consumer -- --profile-top <file.cpuprofile> [--top 30]   (self-time summary)
 *   npm run bench:consumer -- --breakdown   (no Kafka: CPU per message of each layer of the default
 *     stack, and the Redis server's and the client's CPU per key of the marks: consumer/breakdown.ts)
 *
 * A fresh topic (random name, `--partitions`) is pre-filled with `--messages` records of `--size`
 * bytes (consumer/topic.ts); each round consumes it to its end once per variant
 * (consumer/variants.ts lists them: raw, ours, sub, mem, rel, floor, naive, and the Kafka-to-Kafka
 * relay, relaytx, relaydedup), alternating the order, with a fresh consumer group each (consumer/rounds.ts). Every kafkajs consumer uses the
 * subscriber's fetch settings (`partitionsConsumedConcurrently` = `--concurrency`, 3 by default, as
 * KafkaSubscriber; `maxWaitTimeInMs` 250) so the ratios isolate our layers. messages/s = messages ÷
 * (time of the last message − time of the first), so group join and the final idle fetch count for
 * no one. Prints per-round figures, the medians, the ratios to raw (goal ≥ 0.5), to the floor
 * (≥ 0.8) and to the naive peer (≥ 4), the CPU budget per layer and the load average
 * (consumer/report.ts); deletes the topic, the groups and every Redis key it wrote.
 *
 * Why 6 partitions: ≥ 2 × the 3 partitions each consumer works on concurrently, so a fetch always
 * has work for every slot, while a 2-core machine is not drowned in per-partition overhead.
 */
import { loadavg } from "node:os";
import { startOwnRedis } from "@/server/testing/own-redis";
import { breakdown } from "./consumer/breakdown";
import { summarizeProfile } from "./consumer/profile";
import { report } from "./consumer/report";
import { runRounds, type BenchSettings } from "./consumer/rounds";
import { parseVariants } from "./consumer/variants";
import { arg, flag, intArg } from "../lib/args";
import { emitFigures, runMain } from "../lib/run";

/** The run's settings from the flags; the Redis URL is filled in by `main` (an own server with --own-redis). */
function settings(): Omit<BenchSettings, "redisUrl" | "ownRedis"> {
  return {
    messages: intArg("messages", 500_000, 1, 10_000_000),
    partitions: intArg("partitions", 6, 1, 64),
    rounds: intArg("rounds", 3, 1, 20),
    size: intArg("size", 200, 120, 100_000),
    chunk: intArg("chunk", 100, 1, 10_000),
    commitIntervalMs: intArg("commit-interval", 0, 0, 600_000),
    roundTimeoutS: intArg("round-timeout", 180, 5, 600),
    concurrency: intArg("concurrency", 3, 1, 64),
    brokers: arg("brokers", process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(","),
    profileDir: arg("profile", ""),
    variants: parseVariants(arg("variants", "raw,ours")),
  };
}

async function main(): Promise<void> {
  const jsonPath = arg("json", "");
  if (flag("breakdown")) {
    emitFigures(await breakdown(), jsonPath);
    return;
  }
  const profileTop = arg("profile-top", "");
  if (profileTop) {
    console.log(summarizeProfile(profileTop, intArg("top", 30, 1, 500)));
    return;
  }
  const base = settings();
  // --own-redis: a private redis-server (random port, stopped by pid), so that its CPU per message
  // is ours alone; by default the shared Redis, as a deployment would share it.
  const own = flag("own-redis") ? await startOwnRedis() : null;
  try {
    const s: BenchSettings = {
      ...base,
      redisUrl: own?.url ?? arg("redis", process.env.REDIS_URL ?? "redis://127.0.0.1:6379"),
      ownRedis: own !== null,
    };
    const load0 = loadavg();
    console.log(
      `bench:consumer  messages=${s.messages} partitions=${s.partitions} rounds=${s.rounds} size≈${s.size}B variants=${s.variants.join(",")} chunk=${s.chunk} commitIntervalMs=${s.commitIntervalMs} partitionsConsumedConcurrently=${s.concurrency}`,
    );
    console.log(
      `  brokers=${s.brokers.join(",")} redis=${new URL(s.redisUrl).host} node ${process.version} ${new Date().toISOString()} loadavg ${load0.map((x) => x.toFixed(2)).join(" ")}`,
    );
    const outcome = await runRounds(s);
    emitFigures(report(s.variants, s.rounds, outcome, load0, loadavg()), jsonPath);
  } finally {
    await own?.stop();
  }
}

runMain(main);
