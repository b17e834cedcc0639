/**
 * One topic of a `KafkaSubscriber` (one `subscribe` call): its kafkajs consumer in the group, each
 * fetched batch through the shared partition loop, the offsets acked but not yet committed (and
 * what a rebalance does to them), and the graceful stop: finish the in-flight batch, commit, leave.
 */
import type { Consumer, EachBatchPayload } from "kafkajs";
import type { MessageSink } from "@/server/dedup";
import type { PartitionTransactions } from "./kafka-transactions";
import { pumpPartition, type SubscriberOptions } from "./partition-pump";

/** The resolved subscriber options a topic consumer reads. */
export type TopicConsumerOptions = SubscriberOptions & {
  chunkSize: number;
  nackDelayMs: number;
  commitIntervalMs: number;
  stopTimeoutMs: number;
  heartbeatIntervalMs: number;
  fromBeginning: boolean;
  partitionsConsumedConcurrently: number;
};

/** What a topic consumer shares with the rest of its replica. */
export interface ReplicaLink {
  /** `context.subscriber` of its messages: `kafka/<replica>`. */
  readonly subscriber: string;
  /** True once the replica crashed: a stop then leaves without committing. */
  crashed(): boolean;
  /** Marks the replica crashed; false when it already was. */
  markCrashed(): boolean;
  /** Stops every topic of the replica. */
  closeAll(): Promise<void>;
  /** A group join assigned these partitions of the topic (sorted). */
  assigned(partitions: number[]): void;
  /** The consumer left the group (or tried to). */
  left(): void;
  /** The transactions mode's producers of this topic (null: offsets committed by the consumer). */
  readonly transactions: PartitionTransactions | null;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One kafkajs consumer reading one topic for its replica; `start` it, `shutdown` to leave. */
export class KafkaTopicConsumer {
  /** Resolves once the consumer left the group. */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private readonly joined: Promise<void>;
  private joinedResolve!: () => void;
  private joinedReject!: (e: unknown) => void;
  // Messages of this subscription are aborted only when the replica crashes (a graceful stop lets
  // the in-flight message finish: the Router stops the batch after it).
  private readonly crash = new AbortController();
  private stopping = false;
  /** Acked offsets not yet committed: the next offset to read, per partition. */
  private readonly pending = new Map<number, string>();
  private lastCommit = Date.now();
  private readonly running = new Set<Promise<void>>();
  private readonly ticker: NodeJS.Timeout | null;
  private shut: Promise<void> | null = null;

  constructor(
    private readonly consumer: Consumer,
    private readonly topic: string,
    private readonly sink: MessageSink,
    private readonly signal: AbortSignal,
    private readonly o: TopicConsumerOptions,
    private readonly replica: ReplicaLink,
  ) {
    this.closed = new Promise<void>((r) => (this.resolveClosed = r));
    this.joined = new Promise<void>((res, rej) => {
      this.joinedResolve = res;
      this.joinedReject = rej;
    });
    this.joined.catch(() => undefined);
    // An idle partition's acked tail is committed too, once the interval has passed (no phantom lag).
    this.ticker =
      o.commitIntervalMs > 0
        ? setInterval(
            () => {
              if (!this.stopping && this.pending.size > 0 && Date.now() - this.lastCommit >= o.commitIntervalMs)
                void this.flush();
            },
            Math.max(250, Math.floor(o.commitIntervalMs / 2)),
          )
        : null;
    this.ticker?.unref();
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      // A new generation re-reads every assigned partition from its committed offset: what was
      // pending is re-read, never committed late over another member's progress.
      this.pending.clear();
      this.lastCommit = Date.now();
      const parts = (e.payload.memberAssignment as Record<string, number[]>)[topic] ?? [];
      replica.assigned([...parts].sort((a, b) => a - b));
      void replica.transactions?.assigned(parts);
      this.joinedResolve();
    });
    consumer.on(consumer.events.CRASH, (e) => {
      if (!e.payload.restart) {
        this.joinedReject(e.payload.error);
        void this.shutdown();
      }
    });
  }

  /** Joins the group and starts consuming; leaves and throws when the join fails or takes over 60 s. */
  async start(): Promise<void> {
    const { consumer, o } = this;
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: o.fromBeginning });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: o.partitionsConsumedConcurrently,
      eachBatch: (payload) => {
        const run = this.eachBatch(payload);
        this.running.add(run);
        return run.finally(() => this.running.delete(run));
      },
    });
    await Promise.race([
      this.joined,
      sleep(60_000).then(() => Promise.reject(new Error(`KafkaSubscriber: group ${o.groupId} not joined within 60 s`))),
    ]).catch(async (e) => {
      await this.shutdown();
      throw e;
    });
  }

  /** Leaves the group once: the in-flight batch finishes (bounded by `stopTimeoutMs`), what was acked is committed. */
  shutdown(): Promise<void> {
    this.shut ??= (async () => {
      this.stopping = true;
      if (this.ticker) clearInterval(this.ticker);
      try {
        // Finish the in-flight batch (bounded: a hung handler must not block shutdown forever;
        // what it did not ack is redelivered to the next owner).
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...this.running]),
          new Promise((r) => (timer = setTimeout(r, this.o.stopTimeoutMs))),
        ]);
        clearTimeout(timer);
        if (!this.replica.crashed()) await this.flush();
        await this.replica.transactions?.close();
        await this.consumer.disconnect();
      } catch {
        // Leaving is best effort: the session timeout frees the partitions anyway.
      }
      this.replica.left();
      this.resolveClosed();
    })();
    return this.shut;
  }

  /** Commits the acked offsets, once the batches' deferred writes have landed. */
  private async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const partitions = [...this.pending].map(([partition, offset]) => ({ partition, offset }));
    this.pending.clear();
    this.lastCommit = Date.now();
    // These offsets were acked after their deliverBatch resolved, i.e. after the batch's deferred
    // `done` marks were sent: wait for them to land before committing (delivery contract item 3).
    if (this.sink.flush) await this.sink.flush();
    if (this.crash.signal.aborted) return; // a crashed replica leaves without committing
    try {
      await this.consumer.commitOffsets(partitions.map((p) => ({ topic: this.topic, ...p })));
    } catch {
      // Refused during a rebalance: those messages are done (and marked in the dedup store);
      // the next owner re-reads them and the Deduplicator swallows them.
    }
  }

  /** `beforeCommit` said crash: the whole replica leaves without committing. */
  private onCrash(): void {
    if (!this.replica.markCrashed()) return;
    this.stopping = true;
    this.crash.abort();
    // Not awaited here: disconnect waits for the running eachBatch, which is returning now.
    setImmediate(() => void this.replica.closeAll());
  }

  /** One fetched kafkajs batch through the shared partition loop: chunks, acks, commits, DLQ. */
  private eachBatch(p: EachBatchPayload): Promise<void> {
    const { batch, heartbeat, isRunning, isStale, resolveOffset } = p;
    const { topic, partition } = batch;
    const o = this.o;
    const crashSignal = this.crash.signal;
    const tx = this.replica.transactions;
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
      sink: this.sink,
      options: o,
      subscriber: this.replica.subscriber,
      signal: crashSignal,
      deliverSingly: () => o.chunkSize === 1,
      halt: () => !isRunning() || isStale() || this.stopping || this.signal.aborted || crashSignal.aborted,
      ack: (offset) => {
        resolveOffset(offset);
        // In the transactions mode the offset was committed in the chunk's transaction.
        if (!tx) this.pending.set(partition, (BigInt(offset) + 1n).toString());
      },
      commit: async () => {
        if (crashSignal.aborted) return; // a crashed replica leaves without committing
        if (o.commitIntervalMs === 0 || Date.now() - this.lastCommit >= o.commitIntervalMs) await this.flush();
      },
      redeliver: (offset) => {
        if (isRunning()) this.consumer.seek({ topic: this.topic, partition, offset });
      },
      onCrash: () => this.onCrash(),
      // kafkajs heartbeats only when asked.
      heartbeat: { intervalMs: o.heartbeatIntervalMs, beat: heartbeat },
      ...(tx ? { transaction: (first: string) => tx.begin(partition, first) } : {}),
    });
  }
}
