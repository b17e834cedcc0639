/**
 * What the conformance kit drives and watches: records published to the consumer's topic as kcat
 * would (the UUID in the Watermill header, a raw payload), the consumer's DLQ topic read from its
 * beginning, and Redis' MONITOR stream of the commands on the handler's keys.
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Consumer, type Producer } from "kafkajs";
import { Redis } from "ioredis";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { dlqTopicOf } from "@/names/dlq";

/** Where a published record landed. */
export interface Sent {
  uuid: string;
  payload: Buffer;
  partition: number;
  offset: string;
}

/** A record read from the DLQ topic. */
export interface DlqRecord {
  uuid: string | undefined;
  payload: Buffer;
  headers: Record<string, string>;
}

/** One command a client sent to Redis (MONITOR), upper-cased name first; `lua` when a script ran it. */
export interface Command {
  args: string[];
  lua: boolean;
}

/** The kit's connections: a producer, a DLQ reader, a Redis client and a MONITOR of the handler's keys. */
export interface Drive {
  redis: Redis;
  send(uuid: string, payload: string | Buffer): Promise<Sent>;
  dlq: DlqRecord[];
  /** Commands on keys under `prefix:` since the drive opened, in order. */
  commands: Command[];
  /** Committed offsets of `group` on the topic, by partition. */
  committed(group: string): Promise<Map<number, bigint>>;
  close(): Promise<void>;
}

/** Options of {@link openDrive}. */
export interface DriveOptions {
  brokers: readonly string[];
  redisUrl: string;
  topic: string;
  /** The handler's key prefix; MONITOR keeps the commands on its keys only. */
  prefix: string;
  /** Headers every record carries besides the UUID (e.g. `Event-Type` for a handler that filters on it). */
  headers: Record<string, string>;
}

function headerText(v: unknown): string | undefined {
  if (Buffer.isBuffer(v)) return v.toString("utf8");
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.length > 0) return headerText(v[v.length - 1]);
  return undefined;
}

async function readDlq(kafka: Kafka, topic: string, into: DlqRecord[]): Promise<{ consumer: Consumer; group: string }> {
  const group = `conformance-${randomBytes(4).toString("hex")}`;
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, rebalanceTimeout: 10_000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) {
        const t = headerText(v);
        if (t !== undefined) headers[k] = t;
      }
      into.push({ uuid: headers[WATERMILL_UUID_HEADER], payload: message.value ?? Buffer.alloc(0), headers });
    },
  });
  return { consumer, group };
}

/** Opens the drive: the MONITOR and the DLQ reader are running when it resolves. */
export async function openDrive(o: DriveOptions): Promise<Drive> {
  const kafka = new Kafka({ clientId: "conformance", brokers: [...o.brokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const dlqTopic = dlqTopicOf(o.topic);
  const existing = new Set(await admin.listTopics());
  const missing = [o.topic, dlqTopic].filter((t) => !existing.has(t));
  if (missing.length > 0)
    await admin.createTopics({ topics: missing.map((topic) => ({ topic, numPartitions: 1 })), waitForLeaders: true });
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
  await redis.connect();
  const monitor = await redis.monitor();
  const commands: Command[] = [];
  const keyPrefix = `${o.prefix}:`;
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    if (args.some((a) => a.startsWith(keyPrefix)))
      commands.push({
        args: [String(args[0]).toUpperCase(), ...args.slice(1)],
        lua: source === "lua" || source.includes("lua"),
      });
  });
  const dlq: DlqRecord[] = [];
  const reader = await readDlq(kafka, dlqTopic, dlq);
  return {
    redis,
    dlq,
    commands,
    async send(uuid, payload) {
      const value = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
      const [meta] = await producer.send({
        topic: o.topic,
        acks: -1,
        messages: [{ value, headers: { ...o.headers, [WATERMILL_UUID_HEADER]: uuid } }],
      });
      if (!meta) throw new Error(`publishing to ${o.topic} returned no position`);
      return { uuid, payload: value, partition: meta.partition, offset: meta.baseOffset ?? meta.offset ?? "" };
    },
    async committed(group) {
      const out = new Map<number, bigint>();
      const [t] = await admin.fetchOffsets({ groupId: group, topics: [o.topic] });
      for (const p of t?.partitions ?? []) if (p.offset !== "-1") out.set(p.partition, BigInt(p.offset));
      return out;
    },
    async close() {
      await reader.consumer.disconnect().catch(() => undefined);
      await admin.deleteGroups([reader.group]).catch(() => undefined);
      monitor.disconnect();
      redis.disconnect();
      await producer.disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    },
  };
}
