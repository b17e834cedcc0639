/**
 * A kafkajs `Publisher` writing Watermill's wire format (see `watermill-codec.ts`). Resolves once
 * the broker acknowledged every record (acks = all).
 */
import { Kafka, logLevel, Partitioners, type Producer } from "kafkajs";
import type { Message } from "@/server/dedup/message";
import type { Publisher } from "@/server/dedup/pubsub";
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
   * (records spread over partitions). @default () => undefined
   */
  partitionKey?: (topic: string, msg: Message) => string | undefined;
  /** kafkajs log level. @default logLevel.WARN */
  logLevel?: logLevel;
}

/** Defaults of {@link KafkaPublisherOptions}. */
export const DEFAULT_KAFKA_PUBLISHER_OPTIONS = {
  clientId: "dedup-health-publisher",
  partitionKey: () => undefined,
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
    if (!this.o.brokers || this.o.brokers.length === 0) throw new RangeError("KafkaPublisher: brokers must list at least one host:port (KAFKA_BROKERS)");
    const kafka = new Kafka({
      clientId: this.o.clientId,
      brokers: [...this.o.brokers],
      logLevel: this.o.logLevel,
      logCreator: kafkaLogCreator,
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    });
    this.producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  }

  async publish(topic: string, ...msgs: Message[]): Promise<void> {
    if (this.closed) throw new Error("KafkaPublisher: publish after close()");
    if (msgs.length === 0) return;
    this.connecting ??= this.producer.connect().catch((e) => {
      this.connecting = null;
      throw e;
    });
    await this.connecting;
    await this.producer.send({
      topic,
      acks: -1,
      messages: msgs.map((m) => {
        const key = this.o.partitionKey(topic, m);
        const rec = encodeRecord(m, key);
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
