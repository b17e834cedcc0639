/**
 * The Kafka-transactions mode of a `KafkaSubscriber` (option `transactions`): for a handler whose
 * only effects are produced messages, each chunk of a partition runs in a Kafka transaction of a
 * transactional, idempotent producer owned by that partition's consumer — the handler's produced
 * messages are sent in it, then the consumed offsets (`sendOffsets`), then it commits; a nack, a
 * failed send or commit aborts it and the chunk is read again. A `read_committed` reader of the
 * output topic sees each output exactly once per input record, whatever crashes or rebalances.
 *
 * Fencing: the transactional id is `<prefix>.<topic>.<partition>` (prefix = the group), so the next
 * owner of a partition, initialising its producer, bumps the epoch: the previous owner's open
 * transaction is aborted and its later sends and commits are refused. kafkajs 2.2.4 speaks
 * TxnOffsetCommit v0–v1 (no group generation, KIP-447's check): the per-partition id is what
 * fences, and after each producer initialisation the owner re-reads the group's committed offset of
 * the partition and skips what a previous owner committed after this member's join had read it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Partitioners, type Admin, type Kafka, type Producer, type Transaction } from "kafkajs";
import { NonRetryableError, type Message, type Publisher } from "@/server/dedup";
import { encodeRecord } from "./watermill-codec";

/** A chunk's transaction as the partition pump drives it. */
export interface ChunkTransaction {
  /** Runs `fn` (the chunk's deliveries) with this transaction current: the transactional publisher sends into it. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Sends the consumed offset (`next`: the offset after the chunk's last record) into it, then commits. */
  commit(next: string): Promise<void>;
  /** Aborts it: its produced messages are never visible to a `read_committed` reader. */
  abort(): Promise<void>;
}

/** A begun transaction, or the group's committed offset when it is past the chunk's first record (skip there). */
export type ChunkBegin = { tx: ChunkTransaction } | { committedAt: string };

/** Options of the transactions mode (`KafkaSubscriberOptions.transactions`). */
export interface TransactionsOptions {
  /** Prefix of the transactional ids `<prefix>.<topic>.<partition>`. @default the groupId */
  transactionalIdPrefix?: string;
  /** Broker-side timeout of an open transaction (a crashed owner's is aborted after it, or sooner by its successor). @default 60000 */
  transactionTimeoutMs?: number;
}

/** The transaction the current delivery runs in (set by {@link ChunkTransaction.run}). */
const current = new AsyncLocalStorage<Transaction>();

/**
 * The `publisher` of a handler in transactions mode: publishes into the transaction of the chunk
 * being delivered. Outside one (another handler, a timer) it refuses: such a message would escape
 * the transaction, so it fails as non-retryable instead of being sent on its own.
 */
export class KafkaTransactionalPublisher implements Publisher {
  async publish(topic: string, ...msgs: Message[]): Promise<void> {
    if (msgs.length === 0) return;
    const tx = current.getStore();
    if (!tx)
      throw new NonRetryableError(
        "KafkaTransactionalPublisher: publish outside a transaction (only a handler of a KafkaSubscriber with `transactions` may use it)",
      );
    await tx.send({
      topic,
      acks: -1,
      messages: msgs.map((m) =>
        encodeRecord(m, m.key && Buffer.from(m.key.buffer, m.key.byteOffset, m.key.byteLength)),
      ),
    });
  }

  async close(): Promise<void> {}
}

interface Owned {
  producer: Producer;
  /** Whether the committed offset was re-read since this producer fenced the previous owner. */
  checked: boolean;
}

/** The transactional producers of one topic consumer, one per partition it owns. */
export class PartitionTransactions {
  private readonly owned = new Map<number, Owned>();
  private admin: Admin | null = null;

  constructor(
    private readonly kafka: Kafka,
    private readonly groupId: string,
    private readonly topic: string,
    private readonly o: TransactionsOptions,
  ) {}

  /** The transactional id of `partition`: what a successor shares, so its producer fences ours. */
  transactionalId(partition: number): string {
    return `${this.o.transactionalIdPrefix ?? this.groupId}.${this.topic}.${partition}`;
  }

  /** Begins the transaction of a chunk of `partition` whose first record is at `first`. */
  async begin(partition: number, first: string): Promise<ChunkBegin> {
    const own = await this.producerOf(partition);
    let tx: Transaction;
    try {
      tx = await own.producer.transaction();
      if (!own.checked) {
        const committed = await this.committedOffset(partition);
        own.checked = true;
        if (committed !== null && BigInt(committed) > BigInt(first)) {
          await tx.abort();
          return { committedAt: committed };
        }
      }
    } catch (e) {
      await this.drop(partition);
      throw e;
    }
    return { tx: this.chunk(partition, tx) };
  }

  private chunk(partition: number, tx: Transaction): ChunkTransaction {
    const fail = async (e: unknown): Promise<never> => {
      // A fenced or broken producer is never used again: the next chunk initialises a new one
      // (which fences whoever else holds the id, then re-reads the committed offset).
      await this.drop(partition);
      throw e;
    };
    return {
      run: (fn) => current.run(tx, fn),
      commit: async (next) => {
        try {
          await tx.sendOffsets({
            consumerGroupId: this.groupId,
            topics: [{ topic: this.topic, partitions: [{ partition, offset: next }] }],
          });
          await tx.commit();
        } catch (e) {
          await fail(e);
        }
      },
      abort: async () => {
        try {
          if (tx.isActive()) await tx.abort();
        } catch (e) {
          await fail(e);
        }
      },
    };
  }

  /** A group join assigned `partitions`: the producers of the others are released; every owner re-reads its committed offset. */
  async assigned(partitions: readonly number[]): Promise<void> {
    for (const [p, own] of this.owned) {
      if (!partitions.includes(p)) await this.drop(p);
      else own.checked = false;
    }
  }

  /** Releases every producer (an open transaction is aborted by the broker or the next owner). */
  async close(): Promise<void> {
    await Promise.all([...this.owned.keys()].map((p) => this.drop(p)));
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = null;
  }

  private async producerOf(partition: number): Promise<Owned> {
    const had = this.owned.get(partition);
    if (had) return had;
    const producer = this.kafka.producer({
      transactionalId: this.transactionalId(partition),
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: this.o.transactionTimeoutMs ?? 60_000,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      // The coordinator answers the first send after a commit with CONCURRENT_TRANSACTIONS while it
      // still writes the markers: retried after ~20 ms instead of the client's 200 ms.
      retry: { retries: 10, initialRetryTime: 20, maxRetryTime: 1000 },
    });
    await producer.connect();
    const own = { producer, checked: false };
    this.owned.set(partition, own);
    return own;
  }

  private async drop(partition: number): Promise<void> {
    const own = this.owned.get(partition);
    if (!own) return;
    this.owned.delete(partition);
    await own.producer.disconnect().catch(() => undefined);
  }

  /** The group's committed offset of `partition` (null when none). */
  private async committedOffset(partition: number): Promise<string | null> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    const res = await this.admin.fetchOffsets({ groupId: this.groupId, topics: [this.topic] });
    const off = res.find((t) => t.topic === this.topic)?.partitions.find((p) => p.partition === partition)?.offset;
    return off === undefined || off === "-1" || off === "" ? null : off;
  }
}
