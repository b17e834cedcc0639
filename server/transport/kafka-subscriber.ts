/**
 * A kafkajs `Subscriber` that keeps the library's delivery contract (server/dedup/pubsub.ts):
 * per-partition order, an offset committed only after the stack acked that message and every
 * earlier one of its partition, a nack redelivered (seek back, nothing later of that partition
 * committed), batches handed to the Router's batch entry point (one pipelined pre-claim per chunk),
 * and a graceful stop (finish the in-flight message, commit, leave the group).
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Consumer, type EachBatchPayload } from "kafkajs";
import type { MessageSink, Subscriber, Subscription } from "@/server/dedup/pubsub";
import { kafkaLogCreator } from "./kafka-log";
import { pumpPartition, type SubscriberOptions } from "./partition-pump";

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

type ResolvedSubscriberOptions = KafkaSubscriberOptions & Required<Pick<KafkaSubscriberOptions, keyof typeof DEFAULT_KAFKA_SUBSCRIBER_OPTIONS>>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface BatchHooks {
  crashSignal: AbortSignal;
  isStopping: () => boolean;
  onCrash: () => void;
  seek: (partition: number, offset: string) => void;
  /** Marks `offset` done (resolve); committed by the next `commit` (or interval flush, or graceful stop). */
  ack: (partition: number, offset: string) => void;
  /** Commits what was acked, now (`commitIntervalMs` 0) or once the interval has passed. */
  commit: () => Promise<void>;
}

/** Kafka `Subscriber`: one kafkajs consumer per `subscribe` call, in the subscriber's group. */
export class KafkaSubscriber implements Subscriber {
  readonly name = "kafka";
  readonly replica: string;
  private readonly o: ResolvedSubscriberOptions;
  private readonly kafka: Kafka;
  private readonly consumers = new Set<Consumer>();
  private readonly closers = new Set<() => Promise<void>>();
  private crashedFlag = false;
  /** Partitions currently assigned, per topic (updated on every group join). */
  readonly assignment = new Map<string, number[]>();

  constructor(options: KafkaSubscriberOptions) {
    this.o = { ...DEFAULT_KAFKA_SUBSCRIBER_OPTIONS, ...options };
    const o = this.o;
    if (!o.brokers || o.brokers.length === 0) throw new RangeError("KafkaSubscriber: brokers must list at least one host:port (KAFKA_BROKERS)");
    if (!o.groupId) throw new RangeError("KafkaSubscriber: groupId must be non-empty");
    if (!Number.isInteger(o.chunkSize) || o.chunkSize < 1 || o.chunkSize > 10_000) throw new RangeError("KafkaSubscriber: chunkSize must be an integer in [1, 10000]");
    if (!Number.isInteger(o.partitionsConsumedConcurrently) || o.partitionsConsumedConcurrently < 1 || o.partitionsConsumedConcurrently > 64) {
      throw new RangeError("KafkaSubscriber: partitionsConsumedConcurrently must be an integer in [1, 64]");
    }
    if (!(o.sessionTimeoutMs >= 6000 && o.sessionTimeoutMs <= 300_000)) throw new RangeError("KafkaSubscriber: sessionTimeoutMs must be in [6000, 300000] (broker limits)");
    if (!(o.heartbeatIntervalMs >= 100 && o.heartbeatIntervalMs < o.sessionTimeoutMs / 2)) throw new RangeError("KafkaSubscriber: heartbeatIntervalMs must be in [100, sessionTimeoutMs / 2)");
    if (!(o.nackDelayMs >= 0 && o.nackDelayMs <= 60_000)) throw new RangeError("KafkaSubscriber: nackDelayMs must be in [0, 60000]");
    if (!(o.commitIntervalMs >= 0 && o.commitIntervalMs <= 600_000)) throw new RangeError("KafkaSubscriber: commitIntervalMs must be in [0, 600000] (0 = after every chunk)");
    if (!(o.stopTimeoutMs >= 0 && o.stopTimeoutMs <= 600_000)) throw new RangeError("KafkaSubscriber: stopTimeoutMs must be in [0, 600000]");
    this.replica = o.replica ?? `r-${randomBytes(3).toString("hex")}`;
    this.kafka = new Kafka({
      clientId: `${o.groupId}/${this.replica}`,
      brokers: [...o.brokers],
      logLevel: o.logLevel,
      logCreator: kafkaLogCreator,
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5000 },
    });
  }

  /** True once `beforeCommit` made this replica crash. */
  get crashed(): boolean {
    return this.crashedFlag;
  }

  async subscribe(topic: string, sink: MessageSink, signal: AbortSignal): Promise<Subscription> {
    const o = this.o;
    const consumer = this.kafka.consumer({
      groupId: o.groupId,
      sessionTimeout: o.sessionTimeoutMs,
      heartbeatInterval: o.heartbeatIntervalMs,
      rebalanceTimeout: Math.max(o.sessionTimeoutMs, 30_000),
      maxWaitTimeInMs: o.maxWaitTimeMs,
      allowAutoTopicCreation: false,
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5000 },
    });
    this.consumers.add(consumer);
    // Messages of this subscription are aborted only when the replica crashes (a graceful stop lets
    // the in-flight message finish: the Router stops the batch after it).
    const crash = new AbortController();
    let stopping = false;
    let resolveClosed!: () => void;
    const closed = new Promise<void>((r) => (resolveClosed = r));
    let joinedResolve!: () => void;
    let joinedReject!: (e: unknown) => void;
    const joined = new Promise<void>((res, rej) => {
      joinedResolve = res;
      joinedReject = rej;
    });
    joined.catch(() => undefined);

    // Acked offsets not yet committed (next offset to read, per partition), and running batches.
    const pending = new Map<number, string>();
    let lastCommit = Date.now();
    const running = new Set<Promise<void>>();
    const flush = async () => {
      if (pending.size === 0) return;
      const partitions = [...pending].map(([partition, offset]) => ({ partition, offset }));
      pending.clear();
      lastCommit = Date.now();
      // These offsets were acked after their deliverBatch resolved, i.e. after the batch's deferred
      // `done` marks were sent: wait for them to land before committing (delivery contract item 3).
      if (sink.flush) await sink.flush();
      if (crash.signal.aborted) return; // a crashed replica leaves without committing
      try {
        await consumer.commitOffsets(partitions.map((p) => ({ topic, ...p })));
      } catch {
        // Refused during a rebalance: those messages are done (and marked in the dedup store);
        // the next owner re-reads them and the Deduplicator swallows them.
      }
    };
    // An idle partition's acked tail is committed too, once the interval has passed (no phantom lag).
    const ticker =
      o.commitIntervalMs > 0
        ? setInterval(() => {
            if (!stopping && pending.size > 0 && Date.now() - lastCommit >= o.commitIntervalMs) void flush();
          }, Math.max(250, Math.floor(o.commitIntervalMs / 2)))
        : null;
    ticker?.unref();
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      // A new generation re-reads every assigned partition from its committed offset: what was
      // pending is re-read, never committed late over another member's progress.
      pending.clear();
      lastCommit = Date.now();
      const parts = (e.payload.memberAssignment as Record<string, number[]>)[topic] ?? [];
      this.assignment.set(topic, [...parts].sort((a, b) => a - b));
      joinedResolve();
    });
    consumer.on(consumer.events.CRASH, (e) => {
      if (!e.payload.restart) {
        joinedReject(e.payload.error);
        void shutdown();
      }
    });

    let shut: Promise<void> | null = null;
    const shutdown = (): Promise<void> => {
      shut ??= (async () => {
        stopping = true;
        if (ticker) clearInterval(ticker);
        try {
          // Finish the in-flight batch (bounded: a hung handler must not block shutdown forever;
          // what it did not ack is redelivered to the next owner).
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([Promise.allSettled([...running]), new Promise((r) => (timer = setTimeout(r, o.stopTimeoutMs)))]);
          clearTimeout(timer);
          if (!this.crashedFlag) await flush();
          await consumer.disconnect();
        } catch {
          // Leaving is best effort: the session timeout frees the partitions anyway.
        }
        this.consumers.delete(consumer);
        this.assignment.delete(topic);
        resolveClosed();
      })();
      return shut;
    };
    this.closers.add(shutdown);
    if (signal.aborted) {
      await shutdown();
      return { closed };
    }
    signal.addEventListener("abort", () => void shutdown(), { once: true });

    const onCrash = () => {
      if (this.crashedFlag) return;
      this.crashedFlag = true;
      stopping = true;
      crash.abort();
      // Not awaited here: disconnect waits for the running eachBatch, which is returning now.
      setImmediate(() => void Promise.all([...this.closers].map((c) => c())));
    };

    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: o.fromBeginning });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: o.partitionsConsumedConcurrently,
      eachBatch: (payload) => {
        const run = this.eachBatch(payload, sink, {
          crashSignal: crash.signal,
          isStopping: () => stopping || signal.aborted,
          onCrash,
          seek: (part, offset) => consumer.seek({ topic, partition: part, offset }),
          ack: (part, offset) => {
            payload.resolveOffset(offset);
            pending.set(part, (BigInt(offset) + 1n).toString());
          },
          commit: async () => {
            if (crash.signal.aborted) return; // a crashed replica leaves without committing
            if (o.commitIntervalMs === 0 || Date.now() - lastCommit >= o.commitIntervalMs) await flush();
          },
        });
        running.add(run);
        return run.finally(() => running.delete(run));
      },
    });
    await Promise.race([joined, sleep(60_000).then(() => Promise.reject(new Error(`KafkaSubscriber: group ${o.groupId} not joined within 60 s`)))]).catch(async (e) => {
      await shutdown();
      throw e;
    });
    return { closed };
  }

  /** One fetched kafkajs batch through the shared partition loop: chunks, acks, commits, DLQ. */
  private eachBatch(p: EachBatchPayload, sink: MessageSink, h: BatchHooks): Promise<void> {
    const { batch, heartbeat, isRunning, isStale } = p;
    const { topic, partition } = batch;
    const o = this.o;
    // Offsets are committed once per kafkajs batch (its end, a nack, a stop, a rebalance): one
    // commit round trip per fetch instead of per chunk. What is acked but not yet committed is only
    // re-read after a crash or rebalance, and the Deduplicator swallows it: its `done` marks were
    // sent before deliverBatch resolved, and every commit first awaits `sink.flush()`.
    return pumpPartition({
      topic,
      partition,
      records: batch.messages,
      start: 0,
      offsetOf: (m) => m.offset,
      sink,
      options: o,
      subscriber: `kafka/${this.replica}`,
      signal: h.crashSignal,
      deliverSingly: () => o.chunkSize === 1,
      halt: () => !isRunning() || isStale() || h.isStopping() || h.crashSignal.aborted,
      ack: (offset) => h.ack(partition, offset),
      commit: h.commit,
      redeliver: (offset) => {
        if (isRunning()) h.seek(partition, offset);
      },
      onCrash: h.onCrash,
      // kafkajs heartbeats only when asked.
      heartbeat: { intervalMs: o.heartbeatIntervalMs, beat: heartbeat },
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.closers].map((c) => c()));
  }
}
