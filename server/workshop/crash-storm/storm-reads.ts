/**
 * What the crash storm reads from the broker: how far a consumer group committed on the input topic
 * (Kafka's committed offsets, or the embedded broker's), and the output records of a topic as a
 * `read_committed` consumer sees them — an aborted transaction's records are never among them.
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { KafkaTransport, MemoryTransport, type Transport } from "@/server/transport";
import { CommittedLog, type DecodedRecord } from "./committed-log";

/** Committed positions and committed records of one run's topics. */
export interface StormReads {
  /** Records of `topic` the group committed (Σ committed offsets; every partition starts at 0). */
  committed(groupId: string, topic: string): Promise<number>;
  /** Records on `topic` now (Σ of its partitions' end offsets; every partition starts at 0). */
  records(topic: string): Promise<number>;
  /** The `_watermill_message_uuid` of every record of `topic` a `read_committed` consumer reads. */
  committedUuids(topic: string): Promise<string[]>;
  /** Deletes consumer groups (best effort). */
  deleteGroups(groupIds: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** The reads over `transport`: the embedded broker's state, or a Kafka admin and consumer of their own. */
export function stormReads(transport: Transport): StormReads {
  if (transport instanceof KafkaTransport) return new KafkaReads(transport.brokers);
  if (transport instanceof MemoryTransport) {
    const broker = transport.broker;
    return {
      committed: async (groupId, topic) => {
        let n = 0;
        for (const [k, next] of broker.group(groupId).committed) if (k.startsWith(`${topic}\u0000`)) n += next;
        return n;
      },
      records: async (topic) => broker.records(topic).length,
      // The embedded broker has no transactions: every record is committed.
      committedUuids: async (topic) => (await transport.readAll(topic)).flatMap((d) => (d.ok ? [d.uuid] : [])),
      deleteGroups: async () => undefined,
      close: async () => undefined,
    };
  }
  throw new TypeError("stormReads: a KafkaTransport or a MemoryTransport");
}

class KafkaReads implements StormReads {
  private readonly kafka: Kafka;
  private admin: Promise<Admin> | null = null;

  constructor(brokers: readonly string[]) {
    this.kafka = new Kafka({ clientId: "workshop-crash-storm", brokers: [...brokers], logLevel: logLevel.NOTHING });
  }

  private connected(): Promise<Admin> {
    this.admin ??= (async () => {
      const a = this.kafka.admin();
      await a.connect();
      return a;
    })();
    return this.admin;
  }

  async committed(groupId: string, topic: string): Promise<number> {
    const res = await (await this.connected()).fetchOffsets({ groupId, topics: [topic] });
    return (res[0]?.partitions ?? []).reduce((s, p) => s + Math.max(0, Number(p.offset)), 0);
  }

  async records(topic: string): Promise<number> {
    const ends = await (await this.connected()).fetchTopicOffsets(topic);
    return ends.reduce((s, e) => s + Number(e.high), 0);
  }

  /**
   * Reads `topic` from the start to the high watermarks seen at the call, each partition resolved by
   * its transaction markers (./committed-log.ts: kafkajs's own read_committed filter lets records of
   * transactions aborted out of order through). Fetches stop at the last stable offset, so a
   * transaction still open holds the reader back: it rejects after 20 s, and when a record's
   * marker was not among what it read.
   */
  async committedUuids(topic: string): Promise<string[]> {
    const ends = await (await this.connected()).fetchTopicOffsets(topic);
    const target = new Map<number, bigint>();
    for (const e of ends) if (BigInt(e.high) > BigInt(e.low)) target.set(e.partition, BigInt(e.high));
    if (target.size === 0) return [];
    const logs = new Map([...target.keys()].map((p) => [p, new CommittedLog()]));
    const groupId = `workshop-read-committed-${randomBytes(4).toString("hex")}`;
    const consumer = this.kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 200 });
    const reached = new Set<number>();
    let finish!: (e?: Error) => void;
    const finished = new Promise<void>((resolve, reject) => (finish = (e) => (e ? reject(e) : resolve())));
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      const end = target.get(payload.partition);
      if (end !== undefined && BigInt(payload.lastOffset) + 1n >= end) reached.add(payload.partition);
      if (reached.size === target.size) finish();
    });
    const timer = setTimeout(
      () => finish(new Error(`a read_committed reader did not reach the end of ${topic} within 20 s`)),
      20_000,
    );
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          const raw = (batch as unknown as { messagesWithinOffset?: DecodedRecord[] }).messagesWithinOffset;
          if (!raw) return finish(new Error("this kafkajs does not expose a batch's control records"));
          for (const r of raw) logs.get(batch.partition)?.add(r);
        },
      });
      await finished;
      const unresolved = [...logs.values()].reduce((n, l) => n + l.unresolved, 0);
      if (unresolved > 0)
        throw new Error(`${unresolved} records of ${topic} read without their transaction's commit or abort marker`);
      return [...logs.values()].flatMap((l) => l.committed);
    } finally {
      clearTimeout(timer);
      await consumer.disconnect().catch(() => undefined);
      await (await this.connected()).deleteGroups([groupId]).catch(() => undefined);
    }
  }

  async deleteGroups(groupIds: readonly string[]): Promise<void> {
    await (await this.connected()).deleteGroups([...groupIds]).catch(() => undefined);
  }

  async close(): Promise<void> {
    const a = this.admin;
    this.admin = null;
    if (a) await (await a).disconnect().catch(() => undefined);
  }
}
