/**
 * The consumers `bench:consumer` compares, one entry each: what it is, whether it writes dedup
 * keys to Redis, the name of its ratio to raw kafkajs in the figures, and how it consumes a round.
 *   raw    kafkajs `eachBatch` + no-op: the reference of every ratio
 *   ours   KafkaSubscriber → Router → default stack with the Redis Deduplicator (lease marking)
 *   sub    KafkaSubscriber → Router → no-op, without middleware (splits transport from dedup)
 *   mem    as `ours` with the in-memory repository (splits the stack's CPU from Redis' round trips)
 *   rel    as `ours` with the "release" marking (one Redis write per message instead of two)
 *   floor  the least Redis work of any Redis-backed dedup (see kafkajs-consumers.ts)
 *   naive  the naive peer, what a user writes from the seed's snippet (see kafkajs-consumers.ts)
 *   relay       a Kafka-to-Kafka handler (one output per input), plain publisher, no middleware (relay.ts)
 *   relaytx     the same in the Kafka-transactions mode (outputs + offsets in one transaction per chunk)
 *   relaydedup  the same under the default stack with the Redis Deduplicator (the Redis mode)
 */
import type { Redis } from "ioredis";
import type { Kafka } from "kafkajs";
import { MemoryRepository, RedisRepository } from "@/server/dedup";
import type { ConsumeFigures } from "./clock";
import { consumeFloor, consumeNaive, consumeRaw } from "./kafkajs-consumers";
import { consumeOurs, type OursRound } from "./ours";
import { consumeRelay, type RelayRound } from "./relay";

/** Every variant, in the order `--variants` lists them when it refuses one. */
export const VARIANTS = [
  "raw",
  "ours",
  "sub",
  "mem",
  "rel",
  "floor",
  "naive",
  "relay",
  "relaytx",
  "relaydedup",
] as const;
/** One of the consumers the bench compares. */
export type Variant = (typeof VARIANTS)[number];

/** What one round of one variant consumes, and with which clients. */
export interface RoundSetup {
  kafka: Kafka;
  brokers: string[];
  topic: string;
  /** Messages in the topic. */
  n: number;
  partitions: number;
  groupId: string;
  /** The round's dedup service: every Redis key of the round is under `<service>:`. */
  service: string;
  /** Client of our RedisRepository (the recommended ioredis options). */
  redis: Redis;
  /** Client of the references (ioredis defaults, as the seed's snippet creates it). */
  plainRedis: Redis;
  chunk: number;
  commitIntervalMs: number;
  /** partitionsConsumedConcurrently of every consumer but the naive peer. */
  concurrency: number;
}

interface VariantSpec {
  /** Writes dedup keys to Redis (counted, then deleted after each round). */
  usesRedis: boolean;
  /** The figure name of its msgs/s ÷ raw kafkajs' (none for raw itself). */
  vsRaw?: string;
  consume(s: RoundSetup): Promise<ConsumeFigures>;
}

const ours = (s: RoundSetup, repository: OursRound["repository"], marking: OursRound["marking"] = "lease") =>
  consumeOurs({
    brokers: s.brokers,
    topic: s.topic,
    n: s.n,
    groupId: s.groupId,
    repository,
    marking,
    service: s.service,
    chunk: s.chunk,
    commitIntervalMs: s.commitIntervalMs,
    concurrency: s.concurrency,
  });
const relay = (s: RoundSetup, mode: RelayRound["mode"]) =>
  consumeRelay({
    kafka: s.kafka,
    brokers: s.brokers,
    topic: s.topic,
    n: s.n,
    groupId: s.groupId,
    mode,
    repository: mode === "dedup" ? new RedisRepository(s.redis) : undefined,
    service: s.service,
    chunk: s.chunk,
    concurrency: s.concurrency,
  });
const kafkajs = (s: RoundSetup) => ({
  kafka: s.kafka,
  topic: s.topic,
  n: s.n,
  groupId: s.groupId,
  concurrency: s.concurrency,
});

/** Each variant's facts, one entry per variant. */
export const VARIANT: Record<Variant, VariantSpec> = {
  raw: { usesRedis: false, consume: (s) => consumeRaw(kafkajs(s)) },
  ours: {
    usesRedis: true,
    vsRaw: "consumer.with_dedup_vs_raw_kafkajs",
    consume: (s) => ours(s, new RedisRepository(s.redis)),
  },
  sub: { usesRedis: false, vsRaw: "consumer.subscriber_only_vs_raw_kafkajs", consume: (s) => ours(s, null) },
  mem: {
    usesRedis: false,
    vsRaw: "consumer.stack_memory_store_vs_raw_kafkajs",
    consume: (s) => ours(s, new MemoryRepository()),
  },
  rel: {
    usesRedis: true,
    vsRaw: "consumer.with_dedup_release_marking_vs_raw_kafkajs",
    consume: (s) => ours(s, new RedisRepository(s.redis), "release"),
  },
  floor: {
    usesRedis: true,
    vsRaw: "consumer.floor_vs_raw_kafkajs",
    consume: (s) => consumeFloor(kafkajs(s), s.plainRedis, `${s.service}:dedup:h:`),
  },
  naive: {
    usesRedis: true,
    vsRaw: "consumer.naive_peer_vs_raw_kafkajs",
    consume: (s) => consumeNaive(kafkajs(s), s.plainRedis, `${s.service}:dedup:h:`, s.partitions),
  },
  relay: { usesRedis: false, vsRaw: "consumer.relay_vs_raw_kafkajs", consume: (s) => relay(s, "plain") },
  relaytx: { usesRedis: false, vsRaw: "consumer.relay_transactions_vs_raw_kafkajs", consume: (s) => relay(s, "tx") },
  relaydedup: {
    usesRedis: true,
    vsRaw: "consumer.relay_redis_dedup_vs_raw_kafkajs",
    consume: (s) => relay(s, "dedup"),
  },
};

/** The variants named by `--variants` (comma-separated); a RangeError names the allowed ones. */
export function parseVariants(list: string): Variant[] {
  const vs = list.split(",");
  for (const v of vs)
    if (!(VARIANTS as readonly string[]).includes(v))
      throw new RangeError(`bench-consumer: --variants must list ${VARIANTS.join(", ")} (got ${v})`);
  return vs as Variant[];
}
