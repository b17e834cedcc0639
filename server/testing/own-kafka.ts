/**
 * An integration test file's own corner of the shared Kafka and Redis: the topics, consumer groups
 * and Redis keys it names are registered here and removed after the file's tests (`afterAll`), so
 * no run leaves anything behind for another engineer's test to trip over.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll } from "vitest";
import { RECOMMENDED_IOREDIS_OPTIONS } from "@/server/dedup";
import { KafkaTransport } from "@/server/transport";

/** The shared stack's broker (`KAFKA_BROKERS`, comma-separated, or 127.0.0.1:9092). */
export const TEST_BROKERS: readonly string[] = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",");

/** What {@link ownKafka} gives a test file. */
export interface OwnKafka {
  brokers: readonly string[];
  /** Admin, raw producer, publisher and reader of the shared broker. */
  kafka: KafkaTransport;
  /** A client of the shared Redis (`REDIS_URL`). */
  redis: Redis;
  /** Creates `<stem>.<id>` topics (id = 8 random hex characters): `suffixes` maps a suffix (`""`, `".dlq"`) to its partitions; returns the names in that order and the id. */
  topics(stem: string, suffixes: Record<string, number>): Promise<{ id: string; names: string[] }>;
  /** A consumer group name `<stem>-<8 hex>`, deleted after the file. */
  group(stem: string): string;
  /** Redis keys to delete after the file. */
  forget(...keys: string[]): void;
}

/** Registers the file's clean-up and returns its clients (see the module doc). */
export function ownKafka(): OwnKafka {
  const brokers = TEST_BROKERS;
  const kafka = new KafkaTransport([...brokers]);
  const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", RECOMMENDED_IOREDIS_OPTIONS);
  const topics: string[] = [];
  const groups: string[] = [];
  const keys: string[] = [];
  afterAll(async () => {
    for (const k of keys) await redis.del(k);
    await redis.quit();
    await kafka.deleteGroups(groups);
    await kafka.deleteTopics(topics);
    await kafka.close();
  });
  return {
    brokers,
    kafka,
    redis,
    async topics(stem, suffixes) {
      const id = randomBytes(4).toString("hex");
      const specs = Object.entries(suffixes).map(([suffix, partitions]) => ({
        name: `${stem}.${id}${suffix}`,
        partitions,
      }));
      topics.push(...specs.map((s) => s.name));
      await kafka.createTopics(specs);
      return { id, names: specs.map((s) => s.name) };
    },
    group(stem) {
      const g = `${stem}-${randomBytes(4).toString("hex")}`;
      groups.push(g);
      return g;
    },
    forget(...k) {
      keys.push(...k);
    },
  };
}

/** Resolves once `cond()` is true (checked every 200 ms); rejects after `ms`, naming `what`. */
export async function until(
  cond: () => Promise<boolean> | boolean,
  ms = 30_000,
  what = "the condition",
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
