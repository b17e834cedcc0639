/**
 * A kafkajs `Subscriber` that keeps the library's delivery contract (server/dedup/pubsub.ts):
 * per-partition order, an offset committed only after the stack acked that message and every
 * earlier one of its partition, a nack redelivered (seek back, nothing later of that partition
 * committed), batches handed to the Router's batch entry point (one pipelined pre-claim per chunk),
 * and a graceful stop (finish the in-flight message, commit, leave the group).
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Consumer } from "kafkajs";
import type { MessageSink, Middleware, Subscriber, Subscription } from "@/server/dedup";
import { kafkaLogCreator } from "./kafka-log";
import { KafkaTopicConsumer } from "./kafka-topic-consumer";
import { KafkaTransactionalPublisher, PartitionTransactions, type TransactionsOptions } from "./kafka-transactions";
import { transactionsInfoMiddleware, type TransactionsInfoOptions } from "./kafka-transactions-info";
import type { SubscriberOptions } from "./partition-pump";

/** Options of {@link KafkaSubscriber}: the shared {@link SubscriberOptions} plus kafkajs's own knobs. */
export interface KafkaSubscriberOptions extends SubscriberOptions {
  /** Bootstrap brokers, `host:port`. Required. */
  brokers: readonly string[];
  /** Start a group without committed offsets at the earliest offset. @default true */
  fromBeginning?: boolean;
  /** Partitions processed concurrently (order is kept within each). @default 3 */
  partitionsConsumedConcurrently?: number;
  /** Group session timeout: how long a member that vanished without leaving holds its partitions. @default 10000 */
  sessionTimeoutMs?: number;
  /** Heartbeat interval; also sent between chunks of a long batch. @default 1000 */
  heartbeatIntervalMs?: number;
  /** Longest fetch wait on an idle partition (bounds shutdown latency too). @default 250 */
  maxWaitTimeMs?: number;
  /** How long a stop waits for the in-flight batch before leaving anyway. @default 30000 */
  stopTimeoutMs?: number;
  /** kafkajs log level. @default logLevel.WARN */
  logLevel?: logLevel;
  /**
   * The Kafka-transactions mode (kafka-transactions.ts, docs/LIBRARY.md "Kafka transactions"): each
   * chunk's produced messages (published through {@link KafkaSubscriber.transactionalPublisher})
   * and its consumed offsets commit in one transaction of a per-partition transactional producer,
   * or neither does. For handlers whose only effects are produced messages. @default off
   */
  transactions?: boolean | TransactionsOptions;
}

/** Defaults of {@link KafkaSubscriberOptions}. */
export const DEFAULT_KAFKA_SUBSCRIBER_OPTIONS = {
  fromBeginning: true,
  chunkSize: 100,
  partitionsConsumedConcurrently: 3,
  sessionTimeoutMs: 10_000,
  heartbeatIntervalMs: 1000,
  maxWaitTimeMs: 250,
  nackDelayMs: 200,
  commitIntervalMs: 0,
  stopTimeoutMs: 30_000,
  logLevel: logLevel.WARN,
} satisfies Partial<KafkaSubscriberOptions>;

type ResolvedSubscriberOptions = KafkaSubscriberOptions &
  Required<Pick<KafkaSubscriberOptions, keyof typeof DEFAULT_KAFKA_SUBSCRIBER_OPTIONS>>;

/** Kafka `Subscriber`: one kafkajs consumer per `subscribe` call, in the subscriber's group. */
export class KafkaSubscriber implements Subscriber {
  readonly name = "kafka";
  readonly replica: string;
  private readonly o: ResolvedSubscriberOptions;
  private readonly kafka: Kafka;
  private readonly closers = new Set<() => Promise<void>>();
  private crashedFlag = false;
  /** Partitions currently assigned, per topic (updated on every group join). */
  readonly assignment = new Map<string, number[]>();
  /**
   * The `publisher` of a handler in the transactions mode: what it publishes goes into the
   * transaction of the chunk being delivered (refused outside one).
   */
  readonly transactionalPublisher = new KafkaTransactionalPublisher();

  constructor(options: KafkaSubscriberOptions) {
    this.o = { ...DEFAULT_KAFKA_SUBSCRIBER_OPTIONS, ...options };
    const o = this.o;
    if (!o.brokers || o.brokers.length === 0)
      throw new RangeError("KafkaSubscriber: brokers must list at least one host:port (KAFKA_BROKERS)");
    if (!o.groupId) throw new RangeError("KafkaSubscriber: groupId must be non-empty");
    if (!Number.isInteger(o.chunkSize) || o.chunkSize < 1 || o.chunkSize > 10_000)
      throw new RangeError("KafkaSubscriber: chunkSize must be an integer in [1, 10000]");
    if (
      !Number.isInteger(o.partitionsConsumedConcurrently) ||
      o.partitionsConsumedConcurrently < 1 ||
      o.partitionsConsumedConcurrently > 64
    ) {
      throw new RangeError("KafkaSubscriber: partitionsConsumedConcurrently must be an integer in [1, 64]");
    }
    if (!(o.sessionTimeoutMs >= 6000 && o.sessionTimeoutMs <= 300_000))
      throw new RangeError("KafkaSubscriber: sessionTimeoutMs must be in [6000, 300000] (broker limits)");
    if (!(o.heartbeatIntervalMs >= 100 && o.heartbeatIntervalMs < o.sessionTimeoutMs / 2))
      throw new RangeError("KafkaSubscriber: heartbeatIntervalMs must be in [100, sessionTimeoutMs / 2)");
    if (!(o.nackDelayMs >= 0 && o.nackDelayMs <= 60_000))
      throw new RangeError("KafkaSubscriber: nackDelayMs must be in [0, 60000]");
    if (!(o.commitIntervalMs >= 0 && o.commitIntervalMs <= 600_000))
      throw new RangeError("KafkaSubscriber: commitIntervalMs must be in [0, 600000] (0 = after every chunk)");
    if (!(o.stopTimeoutMs >= 0 && o.stopTimeoutMs <= 600_000))
      throw new RangeError("KafkaSubscriber: stopTimeoutMs must be in [0, 600000]");
    this.replica = o.replica ?? `r-${randomBytes(3).toString("hex")}`;
    this.kafka = new Kafka({
      clientId: `${o.groupId}/${this.replica}`,
      brokers: [...o.brokers],
      logLevel: o.logLevel,
      logCreator: kafkaLogCreator,
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5000 },
    });
  }

  /**
   * The middleware that makes each handler this subscriber serves in the transactions mode export
   * its `dedup_handler_info` (`mode="kafka-transactions"`, kafka-transactions-info.ts) on
   * `o.registry`, as the Deduplicator does for its handlers. Put it in the handler's `middleware`.
   * Throws without the `transactions` option: the info would declare a guarantee it does not have.
   */
  selfDescribe(o: TransactionsInfoOptions): Middleware {
    if (!this.o.transactions)
      throw new RangeError(
        "KafkaSubscriber.selfDescribe: only a subscriber with `transactions` runs the Kafka-transactions mode; a Deduplicator (defaultStack with a registry) describes the others",
      );
    return transactionsInfoMiddleware(o, this.o.groupId);
  }

  /** True once `beforeCommit` made this replica crash. */
  get crashed(): boolean {
    return this.crashedFlag;
  }

  async subscribe(topic: string, sink: MessageSink, signal: AbortSignal): Promise<Subscription> {
    const o = this.o;
    const consumer = this.newConsumer();
    const member = new KafkaTopicConsumer(consumer, topic, sink, signal, this.o, {
      subscriber: `kafka/${this.replica}`,
      crashed: () => this.crashedFlag,
      markCrashed: () => {
        if (this.crashedFlag) return false;
        this.crashedFlag = true;
        return true;
      },
      closeAll: () => this.close(),
      assigned: (partitions) => this.assignment.set(topic, partitions),
      left: () => this.assignment.delete(topic),
      transactions: o.transactions
        ? new PartitionTransactions(this.kafka, o.groupId, topic, o.transactions === true ? {} : o.transactions)
        : null,
    });
    const shutdown = () => member.shutdown();
    this.closers.add(shutdown);
    if (signal.aborted) {
      await shutdown();
      return { closed: member.closed };
    }
    signal.addEventListener("abort", () => void shutdown(), { once: true });
    await member.start();
    return { closed: member.closed };
  }

  /** A kafkajs consumer in the subscriber's group. */
  private newConsumer(): Consumer {
    const o = this.o;
    return this.kafka.consumer({
      groupId: o.groupId,
      sessionTimeout: o.sessionTimeoutMs,
      heartbeatInterval: o.heartbeatIntervalMs,
      rebalanceTimeout: Math.max(o.sessionTimeoutMs, 30_000),
      maxWaitTimeInMs: o.maxWaitTimeMs,
      allowAutoTopicCreation: false,
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5000 },
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.closers].map((c) => c()));
  }
}
