/**
 * The rounds of `bench:consumer`: a fresh topic, pre-filled once; then each round consumes the
 * whole topic once per variant, in alternating order (so that no variant always runs on a warmer
 * or busier machine), each with a fresh consumer group and a fresh dedup key prefix (each round
 * claims every key anew). Measures msgs/s, this process' CPU, and the Redis server's CPU and
 * command time for the variants that write to Redis. Deletes the topic, the groups and every
 * Redis key it wrote.
 */
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { Redis } from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import { RECOMMENDED_IOREDIS_OPTIONS, withTimeout } from "@/server/dedup";
import { kafkaLogCreator } from "@/server/transport/kafka-log";
import { createTopicsReady } from "@/server/transport/topics";
import type { ConsumeFigures } from "./clock";
import { analyzeProfile, profiled, type ProfileSplit } from "./profile";
import { deletePrefix } from "@/server/testing/redis-cluster";
import { redisCpu } from "./redis-stats";
import { fillTopic } from "./topic";
import { VARIANT, type RoundSetup, type Variant } from "./variants";

/** The settings of a run (the command-line flags). */
export interface BenchSettings {
  messages: number;
  partitions: number;
  rounds: number;
  /** Payload bytes per record, about. */
  size: number;
  chunk: number;
  commitIntervalMs: number;
  roundTimeoutS: number;
  concurrency: number;
  brokers: string[];
  redisUrl: string;
  /** The Redis server is this run's own (its CPU is ours alone). */
  ownRedis: boolean;
  /** Where the last round's CPU profiles go; none when empty. */
  profileDir: string;
  variants: Variant[];
}

/** One consume of the whole topic by one variant. */
export interface RoundResult extends ConsumeFigures {
  variant: Variant;
  round: number;
  /** This process' CPU (user + system) per message over the consume, µs (+ the Redis server's for variants that use Redis). */
  cpuUsPerMsg: number;
  /** The Redis server's CPU per message over the consume (`INFO cpu` delta), µs; 0 without Redis. */
  redisCpuUsPerMsg: number;
  /** µs per message Redis spent in the commands (`INFO commandstats` usec of EVALSHA/EVAL/SET), this consume. */
  redisCmdUsPerMsg: number;
}

/** What the rounds measured. */
export interface RoundsOutcome {
  results: RoundResult[];
  /** The last round's CPU profile split per variant (with `--profile`). */
  profiles: Map<Variant, ProfileSplit>;
  /** `ours`' Redis time per message, each round. */
  redisPerMsg: Array<{ execUs: number; cpuUs: number; calls: number }>;
}

const bounded = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  withTimeout(p, ms, () => new Error(`${what} did not finish within ${ms / 1000} s`));
/** A count as the bench prints it: rounded, thousands grouped. */
export const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

/** A run's clients and what it created, for the clean-up. */
interface Stage {
  run: string;
  kafka: Kafka;
  redis: Redis;
  plainRedis: Redis;
  topic: string;
  groups: string[];
  prefixes: string[];
}

/** The Redis server's CPU and command time per message between two `redisCpu` readings; deletes the round's keys and checks there is one per message. */
async function redisDelta(
  s: BenchSettings,
  st: Stage,
  variant: Variant,
  round: number,
  service: string,
  cpu0: Awaited<ReturnType<typeof redisCpu>>,
  out: RoundsOutcome,
) {
  const N = s.messages;
  const cpu1 = await redisCpu(st.redis);
  const keys = await deletePrefix(st.redis, `${service}:`);
  const execUs = ((cpu1.scriptUsec - cpu0.scriptUsec) / N).toFixed(2);
  const cpuUs = ((1e6 * (cpu1.cpuSec - cpu0.cpuSec)) / N).toFixed(2);
  if (variant === "ours")
    out.redisPerMsg.push({ execUs: Number(execUs), cpuUs: Number(cpuUs), calls: cpu1.scriptCalls - cpu0.scriptCalls });
  const extra = `  (${fmt(keys)} dedup keys written, deleted; Redis per msg: ${execUs} µs in EVALSHA/EVAL/SET, ${cpuUs} µs server CPU${s.ownRedis ? ", own server" : " — shared server: includes others' load"})`;
  if (keys < N) throw new Error(`${variant} round ${round}: only ${keys} dedup keys for ${N} messages`);
  return { redisCpuUs: Number(cpuUs), redisCmdUs: Number(execUs), extra };
}

/** Consumes the topic once with `variant` and records the round in `out`. */
async function oneRound(
  s: BenchSettings,
  st: Stage,
  variant: Variant,
  round: number,
  out: RoundsOutcome,
): Promise<void> {
  const groupId = `bench-consumer-${st.run}-${variant}-${round}`;
  st.groups.push(groupId);
  const service = `benchc${st.run}r${round}`;
  const spec = VARIANT[variant];
  if (spec.usesRedis) st.prefixes.push(`${service}:`);
  const setup: RoundSetup = {
    kafka: st.kafka,
    brokers: s.brokers,
    topic: st.topic,
    n: s.messages,
    partitions: s.partitions,
    groupId,
    service,
    redis: st.redis,
    plainRedis: st.plainRedis,
    chunk: s.chunk,
    commitIntervalMs: s.commitIntervalMs,
    concurrency: s.concurrency,
  };
  const cpu0 = spec.usesRedis ? await redisCpu(st.redis) : null;
  const profPath = s.profileDir && round === s.rounds ? `${s.profileDir}/${variant}-r${round}.cpuprofile` : "";
  const c0 = process.cpuUsage();
  const r0 = await bounded(
    profiled(profPath, () => spec.consume(setup)),
    s.roundTimeoutS * 1000,
    `${variant} round ${round}`,
  );
  const c1 = process.cpuUsage(c0);
  if (profPath) out.profiles.set(variant, analyzeProfile(profPath, 15));
  if (r0.messages < s.messages) throw new Error(`${variant} round ${round} consumed ${r0.messages} < ${s.messages}`);
  const redis = cpu0
    ? await redisDelta(s, st, variant, round, service, cpu0, out)
    : { redisCpuUs: 0, redisCmdUs: 0, extra: "" };
  const res: RoundResult = {
    variant,
    round,
    ...r0,
    cpuUsPerMsg: (c1.user + c1.system) / r0.messages + redis.redisCpuUs,
    redisCpuUsPerMsg: redis.redisCpuUs,
    redisCmdUsPerMsg: redis.redisCmdUs,
  };
  out.results.push(res);
  console.log(
    `  round ${round} ${variant.padEnd(4)} ${fmt(res.perSec).padStart(9)} msgs/s  (${res.seconds.toFixed(2)} s first→last, ${res.wallSeconds.toFixed(2)} s with join)` +
      `  CPU ${res.cpuUsPerMsg.toFixed(2)} µs/msg${redis.redisCpuUs ? " (incl. Redis server)" : ""}${redis.extra}  load ${loadavg()[0]!.toFixed(2)}`,
  );
}

/** Creates and fills the topic, runs every round, and deletes what the run created, also when a round fails. */
export async function runRounds(s: BenchSettings): Promise<RoundsOutcome> {
  const run = randomBytes(4).toString("hex");
  const kafka = new Kafka({
    clientId: `bench-consumer-${run}`,
    brokers: s.brokers,
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator,
  });
  const admin = kafka.admin();
  // The references' client (plainRedis): ioredis defaults, as the seed's snippet creates it.
  const st: Stage = {
    run,
    kafka,
    redis: new Redis(s.redisUrl, { ...RECOMMENDED_IOREDIS_OPTIONS }),
    plainRedis: new Redis(s.redisUrl),
    topic: `bench-consumer-${run}`,
    groups: [],
    prefixes: [],
  };
  const out: RoundsOutcome = { results: [], profiles: new Map(), redisPerMsg: [] };
  await admin.connect();
  try {
    await createTopicsReady(admin, [{ name: st.topic, partitions: s.partitions }]);
    const tf = performance.now();
    const avg = await bounded(
      fillTopic(kafka, st.topic, s.messages, s.partitions, s.size),
      300_000,
      "filling the topic",
    );
    console.log(
      `  filled ${st.topic}: ${fmt(s.messages)} records, payload ≈ ${avg.toFixed(0)} B, in ${((performance.now() - tf) / 1000).toFixed(1)} s`,
    );
    for (let round = 1; round <= s.rounds; round++) {
      const order = round % 2 === 1 ? s.variants : [...s.variants].reverse();
      for (const variant of order) await oneRound(s, st, variant, round, out);
    }
  } finally {
    await admin
      .deleteTopics({ topics: [st.topic], timeout: 10_000 })
      .catch((e: unknown) => console.error(`could not delete topic ${st.topic}: ${String(e)}`));
    await admin.deleteGroups(st.groups).catch(() => undefined);
    await admin.disconnect();
    for (const p of st.prefixes) await deletePrefix(st.redis, p).catch(() => 0);
    await st.redis.quit();
    await st.plainRedis.quit();
  }
  return out;
}
