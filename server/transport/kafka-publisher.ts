/**
 * A kafkajs `Publisher` writing Watermill's wire format (see `watermill-codec.ts`). Resolves once
 * the broker acknowledged every record (acks = all).
 */
import { Kafka, logLevel, Partitioners, type Producer, type RecordMetadata } from "kafkajs";
import type { Message, Publisher } from "@/server/dedup";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { encodeRecord } from "./watermill-codec";
import { kafkaLogCreator } from "./kafka-log";
import { NO_UUID } from "./partition-pump";

/** Options of {@link KafkaPublisher}. */
export interface KafkaPublisherOptions {
  /** Bootstrap brokers, `host:port`. Required. */
  brokers: readonly string[];
  /** Client id (broker logs, quotas). @default "dedup-health-publisher" */
  clientId?: string;
  /**
   * Record key per message, which picks the partition. Watermill's default marshaler sets none
   * (records spread over partitions); ours writes the message's own `key` (the key of the record
   * it was consumed from, kept by PoisonQueue's DLQ copy and by a re-drive), so a copy lands on the
   * key's partition and per-key order holds. @default (topic, msg) => msg.key
   */
  partitionKey?: (topic: string, msg: Message) => string | Uint8Array | undefined;
  /** kafkajs log level. @default logLevel.WARN */
  logLevel?: logLevel;
}

/** Defaults of {@link KafkaPublisherOptions}. */
export const DEFAULT_KAFKA_PUBLISHER_OPTIONS = {
  clientId: "dedup-health-publisher",
  partitionKey: (_topic: string, msg: Message) => msg.key,
  logLevel: logLevel.WARN,
} satisfies Partial<KafkaPublisherOptions>;

/** Kafka `Publisher`. Connects on first publish; one producer shared by every topic. */
export class KafkaPublisher implements Publisher {
  private readonly o: Required<KafkaPublisherOptions>;
  private readonly producer: Producer;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(options: KafkaPublisherOptions) {
    this.o = { ...DEFAULT_KAFKA_PUBLISHER_OPTIONS, ...options };
    if (!this.o.brokers || this.o.brokers.length === 0)
      throw new RangeError("KafkaPublisher: brokers must list at least one host:port (KAFKA_BROKERS)");
    const kafka = new Kafka({
      clientId: this.o.clientId,
      brokers: [...this.o.brokers],
      logLevel: this.o.logLevel,
      logCreator: kafkaLogCreator,
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    });
    this.producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
  }

  async publish(topic: string, ...msgs: Message[]): Promise<void> {
    if (msgs.length === 0) return;
    await this.send(topic, msgs);
  }

  /** Publishes one message and resolves where the broker wrote it (a re-drive records its destination). */
  async publishAt(topic: string, msg: Message): Promise<{ partition: number; offset: string }> {
    const [meta] = await this.send(topic, [msg]);
    if (!meta) throw new Error(`KafkaPublisher: the broker acknowledged no record of ${topic}`);
    return { partition: meta.partition, offset: meta.baseOffset ?? meta.offset ?? "" };
  }

  private async send(topic: string, msgs: Message[]): Promise<RecordMetadata[]> {
    if (this.closed) throw new Error("KafkaPublisher: publish after close()");
    this.connecting ??= this.producer.connect().catch((e) => {
      this.connecting = null;
      throw e;
    });
    await this.connecting;
    return this.producer.send({
      topic,
      acks: -1,
      messages: msgs.map((m) => {
        const key = this.o.partitionKey(topic, m);
        const rec = encodeRecord(
          m,
          typeof key === "string" || key === undefined ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength),
        );
        // A DLQ copy of a record that had no UUID stays without one (never invent an id).
        if (m.uuid === NO_UUID) delete rec.headers[WATERMILL_UUID_HEADER];
        return rec;
      }),
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.connecting) await this.producer.disconnect().catch(() => undefined);
  }
}
