/**
 * The one seam between the demo / workshop code and the message broker: real Kafka (kafkajs) or
 * the embedded {@link MemoryBroker}. Everything above it (Router, stack, handlers, scenarios) is
 * the same code in both modes.
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Admin } from "kafkajs";
import type { Publisher, Subscriber } from "@/server/dedup";
import { KafkaPublisher } from "./kafka-publisher";
import { KafkaSubscriber } from "./kafka-subscriber";
import { kafkaLogCreator } from "./kafka-log";
import { MemoryBroker } from "./memory-broker";
import { SharedConnection } from "./shared-connection";
import { createTopicsReady } from "./topics";
import type { SubscriberOptions } from "./partition-pump";
import { decodeRecord, type Decoded } from "./watermill-codec";

/** A subscriber that is one replica of a consumer group. */
export interface GroupSubscriber extends Subscriber {
  readonly replica: string;
  /** True once its `beforeCommit` hook made it crash. */
  readonly crashed: boolean;
  /** Partitions currently assigned, per topic. */
  readonly assignment: Map<string, number[]>;
}

/** Options of one replica's subscriber: the knobs both transports share, with the replica named. */
export type ReplicaSubscriberOptions = SubscriberOptions & { replica: string };

/** A raw record for {@link Transport.produceRaw} (tests, poison input). */
export interface RawRecord {
  headers: Record<string, string>;
  value: Buffer;
}

/** The broker seam. */
export interface Transport {
  readonly mode: "embedded" | "real";
  /** Shared publisher (Watermill wire format). */
  readonly publisher: Publisher;
  /**
   * A publisher of its own (close it when done). Use one per workshop run: kafkajs keeps every topic
   * a producer has written to in its metadata and fails once such a topic is deleted.
   */
  newPublisher(): Publisher;
  /** Creates topics if missing. */
  createTopics(topics: ReadonlyArray<{ name: string; partitions: number }>): Promise<void>;
  /** Deletes topics (best effort). */
  deleteTopics(names: readonly string[]): Promise<void>;
  /** A new replica subscriber of a group. */
  subscriber(options: ReplicaSubscriberOptions): GroupSubscriber;
  /** Every record currently in `topic`, decoded, at most `max` (oldest partitions first). */
  readAll(topic: string, max?: number): Promise<Decoded[]>;
  /** Appends a raw record (any headers). */
  produceRaw(topic: string, rec: RawRecord): Promise<void>;
  /** Releases the transport (publisher, admin). */
  close(): Promise<void>;
}

/** The embedded transport over a {@link MemoryBroker}. */
export class MemoryTransport implements Transport {
  readonly mode = "embedded" as const;
  readonly publisher: Publisher;
  constructor(readonly broker: MemoryBroker = new MemoryBroker()) {
    this.publisher = broker.publisher();
  }
  newPublisher(): Publisher {
    return this.broker.publisher();
  }
  async createTopics(topics: ReadonlyArray<{ name: string; partitions: number }>): Promise<void> {
    for (const t of topics) this.broker.createTopic(t.name, t.partitions);
  }
  async deleteTopics(names: readonly string[]): Promise<void> {
    for (const n of names) this.broker.deleteTopic(n);
  }
  subscriber(o: ReplicaSubscriberOptions): GroupSubscriber {
    return this.broker.subscriber({ ...o, chunkSize: o.chunkSize ?? 20 });
  }
  async readAll(topic: string, max = 100_000): Promise<Decoded[]> {
    return this.broker
      .records(topic)
      .slice(0, max)
      .map((r) => decodeRecord(r.headers, r.value));
  }
  async produceRaw(topic: string, rec: RawRecord): Promise<void> {
    this.broker.produce(topic, rec);
  }
  async close(): Promise<void> {
    await this.broker.close();
  }
}

/** The real transport: kafkajs against `brokers`. */
export class KafkaTransport implements Transport {
  readonly mode = "real" as const;
  readonly publisher: KafkaPublisher;
  private readonly kafka: Kafka;
  /** The one admin client, connected once even when several callers ask at the same moment. */
  private readonly admin: SharedConnection<Admin>;

  constructor(readonly brokers: readonly string[]) {
    if (brokers.length === 0)
      throw new RangeError("KafkaTransport: brokers must list at least one host:port (KAFKA_BROKERS)");
    this.publisher = new KafkaPublisher({ brokers });
    this.kafka = new Kafka({
      clientId: "dedup-health-admin",
      brokers: [...brokers],
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator,
    });
    this.admin = new SharedConnection(async () => {
      const a = this.kafka.admin();
      await a.connect();
      return a;
    });
  }

  newPublisher(): Publisher {
    return new KafkaPublisher({ brokers: this.brokers });
  }

  /** Creates the missing topics; resolves once every partition has a leader ({@link createTopicsReady}). */
  async createTopics(topics: ReadonlyArray<{ name: string; partitions: number }>, timeoutMs = 20_000): Promise<void> {
    await createTopicsReady(await this.admin.get(), topics, timeoutMs);
  }

  async deleteTopics(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    try {
      const admin = await this.admin.get();
      await admin.deleteTopics({ topics: [...names], timeout: 5000 });
    } catch {
      // Best effort: a leftover test topic is harmless.
    }
  }

  /** Deletes consumer groups (best effort; test clean-up). */
  async deleteGroups(groupIds: readonly string[]): Promise<void> {
    if (groupIds.length === 0) return;
    try {
      const admin = await this.admin.get();
      await admin.deleteGroups([...groupIds]);
    } catch {
      // Best effort.
    }
  }

  subscriber(o: ReplicaSubscriberOptions): GroupSubscriber {
    return new KafkaSubscriber({ brokers: this.brokers, ...o });
  }

  /**
   * Reads `topic` from the earliest offset to the high watermarks seen at the call, with a
   * throw-away consumer group (deleted after). Bounded by `max` records and 30 s.
   */
  async readAll(topic: string, max = 100_000): Promise<Decoded[]> {
    const admin = await this.admin.get();
    const ends = await admin.fetchTopicOffsets(topic);
    const target = new Map<number, bigint>();
    for (const e of ends) if (BigInt(e.high) > BigInt(e.low)) target.set(e.partition, BigInt(e.high));
    if (target.size === 0) return [];
    const groupId = `dedup-health-read-${randomBytes(4).toString("hex")}`;
    const consumer = this.kafka.consumer({
      groupId,
      maxWaitTimeInMs: 200,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    const out: Decoded[] = [];
    const done = new Set<number>();
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      let finish!: () => void;
      const finished = new Promise<void>((r) => (finish = r));
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          const end = target.get(partition);
          if (end === undefined || done.has(partition)) return;
          if (out.length < max) out.push(decodeRecord(message.headers, message.value));
          if (BigInt(message.offset) + 1n >= end) done.add(partition);
          if (done.size === target.size || out.length >= max) finish();
        },
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([finished, new Promise<void>((r) => (timer = setTimeout(r, 30_000)))]);
      clearTimeout(timer);
    } finally {
      await consumer.disconnect().catch(() => undefined);
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
    return out;
  }

  async produceRaw(topic: string, rec: RawRecord): Promise<void> {
    const p = this.kafka.producer({ allowAutoTopicCreation: false });
    await p.connect();
    try {
      await p.send({ topic, acks: -1, messages: [{ value: rec.value, headers: rec.headers }] });
    } finally {
      await p.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.publisher.close();
    const admin = this.admin.take();
    if (admin) await admin.then((a) => a.disconnect()).catch(() => undefined);
  }
}
