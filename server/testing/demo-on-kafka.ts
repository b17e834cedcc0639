/**
 * The live demo's consumer on the shared Kafka and Redis for one integration test file: its own
 * topic and DLQ (`<stem>.<id>`, id = 8 random hex characters) and service `<stem><id>` (so its own
 * consumer groups and `<service>:dedup:` keys), no traffic of its own, offsets committed at once.
 * It starts before the file's tests with a plain kafkajs producer beside it, and everything it
 * made (groups, topics, keys, the store's own tables) is removed after them.
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { Registry } from "prom-client";
import { afterAll, beforeAll } from "vitest";
import { RedisRepository } from "@/server/dedup";
import { createDedupRedis, deleteKeysByPrefix, type RedisClient } from "@/server/dedup-redis";
import { DemoService } from "@/server/demo/demo";
import { demoGroupIds } from "@/server/notification/demo-handlers";
import { MemorySideEffectStore, type SideEffectStore } from "@/server/notification/side-effects";
import { KafkaTransport } from "@/server/transport";
import { TEST_BROKERS } from "./own-kafka";

/** Options of {@link startDemoOnKafka}. */
export interface DemoOnKafkaOptions {
  /** Registry of the demo's metrics. @default a new one */
  registry?: Registry;
  /**
   * The demo's side-effect store, made for the file's id and service; closed with `close(true)`
   * after the file (PostgreSQL drops its schema). @default in memory, observing nothing
   */
  store?: (own: { id: string; service: string }) => SideEffectStore;
}

/** What {@link startDemoOnKafka} gives a test file. */
export interface DemoOnKafka {
  readonly id: string;
  readonly service: string;
  readonly topic: string;
  readonly dlqTopic: string;
  readonly registry: Registry;
  /** The consumer's own Redis client (the one the Redis cut-off disconnects). */
  readonly redis: RedisClient;
  readonly transport: KafkaTransport;
  readonly demo: DemoService;
  /** A plain kafkajs producer of the shared broker, connected before the file's tests. */
  readonly producer: Producer;
}

/** Builds the demo, registers its start (`beforeAll`) and clean-up (`afterAll`), and returns it. */
export function startDemoOnKafka(stem: string, opts: DemoOnKafkaOptions = {}): DemoOnKafka {
  const id = randomBytes(4).toString("hex");
  const service = `${stem}${id}`;
  const topic = `${stem}.${id}`;
  const dlqTopic = `${topic}.dlq`;
  const registry = opts.registry ?? new Registry();
  const redis = createDedupRedis({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
  const transport = new KafkaTransport([...TEST_BROKERS]);
  const store = opts.store?.({ id, service }) ?? new MemorySideEffectStore(() => {});
  const demo = new DemoService({
    transport,
    repository: new RedisRepository(redis),
    redis,
    store,
    service,
    registry,
    ratePerSec: 0,
    topic,
    dlqTopic,
    commitIntervalMs: 0,
  });
  const kafka = new Kafka({ clientId: `${stem}-producer`, brokers: [...TEST_BROKERS], logLevel: logLevel.NOTHING });
  let producer: Producer | undefined;

  beforeAll(async () => {
    await demo.start();
    producer = kafka.producer();
    await producer.connect();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await demo.stop();
    await transport.deleteGroups(demoGroupIds(service));
    await transport.deleteTopics([topic, dlqTopic]);
    await transport.close();
    await store.close(true);
    await deleteKeysByPrefix(redis, `${service}:dedup`);
    redis.disconnect();
  }, 60_000);

  return {
    id,
    service,
    topic,
    dlqTopic,
    registry,
    redis,
    transport,
    demo,
    get producer(): Producer {
      if (!producer) throw new Error("startDemoOnKafka: the producer connects in beforeAll; use it inside a test");
      return producer;
    },
  };
}
