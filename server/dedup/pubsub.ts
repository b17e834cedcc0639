/**
 * The transport seam (Watermill's `Subscriber` / `Publisher`) and an in-memory pub/sub, the
 * equivalent of Watermill's gochannel, for tests and the embedded demo.
 *
 * ## The delivery contract (every transport, e.g. the Kafka one in `server/transport`, keeps it)
 * 1. **Order.** Messages of one partition are handed to the sink one call at a time: the transport
 *    never calls `deliver` / `deliverBatch` for partition P again before the previous call for P
 *    resolved. Different partitions may be delivered concurrently.
 * 2. **Outcome per message.** The sink resolves `"ack"` or `"nack"` per message and never rejects.
 *    - `ack`: the message is finished; its offset may be committed once every earlier offset of
 *      its partition was acked too.
 *    - `nack`: the message must be **redelivered**: the transport seeks back to it (Kafka:
 *      `consumer.seek({ topic, partition, offset })`), commits **no later offset of that
 *      partition** until it was acked, and delivers the later messages only after it again.
 * 3. **Batches.** `deliverBatch(msgs)` takes consecutive messages of ONE partition, in order.
 *    It resolves with the outcomes of a prefix of `msgs`: `outcomes[i]` belongs to `msgs[i]`; it
 *    stops at the first `nack` (then the last outcome is `"nack"`) or when the subscription's
 *    signal aborts. **Messages without an outcome were not processed**: the transport must not
 *    commit them and must deliver them again (after the nacked one). Before the per-message stack
 *    runs, the Router gives middleware a chance to prepare the whole batch at once — the
 *    Deduplicator claims all keys in one pipelined round trip (see `Router`).
 *    **Deferred writes.** `deliverBatch` may resolve before the writes its middleware deferred to
 *    the batch's end (the Deduplicator's `done` marks) have settled, so that the next batch's work
 *    overlaps them. A sink that does so has `flush()`: a transport that commits offsets awaits
 *    `sink.flush()` after the batches whose offsets it commits resolved and **before** it commits
 *    them (a crash in between re-reads those messages; it never commits one whose mark is still in
 *    the air). A transport without commits (the in-memory one) awaits it before it reports idle.
 * 4. **Shutdown.** When the signal passed to `subscribe` aborts, the transport stops delivering,
 *    waits for the in-flight sink calls, commits what was acked, and resolves `closed`.
 * 5. **Identity.** `Message.uuid` is the event id carried by the publisher (Kafka header
 *    `_watermill_message_uuid`); a transport never invents one for a message that lacks it
 *    (the subscriber routes such a message to the DLQ with reason `marshal`).
 */
import type { Message, Outcome } from "./message";

/** Where a subscriber delivers messages: the Router's per-handler entry points. */
export interface MessageSink {
  /** Runs the stack for one message; resolves its outcome, never rejects. */
  deliver(msg: Message): Promise<Outcome>;
  /**
   * Runs the stack for consecutive messages of one partition, in order, after one batch
   * preparation (the Deduplicator's pipelined pre-claim). Resolves the outcomes of a prefix of
   * `msgs`, stopping at the first nack; messages without an outcome were not processed.
   */
  deliverBatch(msgs: readonly Message[]): Promise<Outcome[]>;
  /**
   * Resolves once the writes deferred by every `deliverBatch` that already resolved (the
   * Deduplicator's `done` marks) have settled; never rejects. Transports await it before they
   * commit those batches' offsets (contract item 3). Absent = `deliverBatch` defers nothing.
   */
  flush?(): Promise<void>;
}

/**
 * A sink that handles one message at a time with `deliver`: its `deliverBatch` delivers the
 * messages in order and stops after the first nack (no batch preparation, nothing deferred).
 */
export function sequentialSink(deliver: (msg: Message) => Promise<Outcome>): MessageSink {
  return {
    deliver,
    deliverBatch: async (msgs) => {
      const out: Outcome[] = [];
      for (const m of msgs) {
        const o = await deliver(m);
        out.push(o);
        if (o === "nack") break;
      }
      return out;
    },
  };
}

/** A running subscription. */
export interface Subscription {
  /** Resolves when the subscription stopped (its signal aborted and in-flight work settled). */
  readonly closed: Promise<void>;
}

/** Consumes a topic and hands each message to a sink (contract above). */
export interface Subscriber {
  /** Short name for metadata and logs, e.g. `memory`, `kafka`. */
  readonly name: string;
  /**
   * Starts consuming `topic` into `sink`. Resolves once the subscription is established (for Kafka:
   * joined the group). Stops when `signal` aborts.
   */
  subscribe(topic: string, sink: MessageSink, signal: AbortSignal): Promise<Subscription>;
  /** Stops every subscription and releases the transport. Idempotent. */
  close(): Promise<void>;
}

/** Publishes messages to a topic. */
export interface Publisher {
  /**
   * Publishes `msgs` to `topic` in order. Resolves once the transport accepted all of them (Kafka:
   * acknowledged by the broker); rejects if any was not, and then the caller must treat all as unsent.
   */
  publish(topic: string, ...msgs: Message[]): Promise<void>;
  /** Releases the publisher. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link MemoryPubSub}. */
export interface MemoryPubSubOptions {
  /**
   * Keep published messages per topic and replay them to later subscriptions (like a Kafka topic
   * read from the earliest offset). Off = gochannel's default: a message published with no
   * subscriber is dropped.
   * @default true
   */
  persistent?: boolean;
  /** With `persistent`, how many messages per topic are kept (oldest dropped first). @default 10000 */
  maxRetainedPerTopic?: number;
  /** Messages per sink call: 1 uses `deliver`, more uses `deliverBatch`. @default 1 */
  batchSize?: number;
  /** Delay before a nacked message is delivered again. @default 10 */
  nackResendDelayMs?: number;
  /**
   * Called on every publish before it takes effect; a rejection fails the publish (fault injection
   * for tests: "a publisher that can be told to fail").
   */
  beforePublish?: (topic: string, msgs: readonly Message[]) => void | Promise<void>;
}

/** Defaults of {@link MemoryPubSubOptions}. */
export const DEFAULT_MEMORY_PUBSUB_OPTIONS = {
  persistent: true,
  maxRetainedPerTopic: 10_000,
  batchSize: 1,
  nackResendDelayMs: 10,
} as const satisfies MemoryPubSubOptions;

interface MemorySub {
  topic: string;
  queue: Message[];
  inFlight: boolean;
  wake: (() => void) | null;
  signal: AbortSignal;
}

/**
 * In-memory `Subscriber` + `Publisher` (Watermill's gochannel). Every subscription of a topic gets
 * every message (fan-out; each subscription behaves like its own consumer group with one
 * partition). Per subscription, messages are delivered one call at a time, in publish order, and a
 * nacked message is redelivered before the ones after it. **Single process only.**
 */
export class MemoryPubSub implements Subscriber, Publisher {
  readonly name = "memory";
  private readonly opts: Required<Omit<MemoryPubSubOptions, "beforePublish">> &
    Pick<MemoryPubSubOptions, "beforePublish">;
  private readonly retained = new Map<string, Message[]>();
  private readonly subs = new Set<MemorySub>();
  private readonly idleWaiters = new Set<() => void>();
  private readonly closer = new AbortController();

  constructor(options: MemoryPubSubOptions = {}) {
    this.opts = { ...DEFAULT_MEMORY_PUBSUB_OPTIONS, ...options };
    const { batchSize, nackResendDelayMs, maxRetainedPerTopic } = this.opts;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
      throw new RangeError("MemoryPubSub: batchSize must be an integer in [1, 10000]");
    if (!(nackResendDelayMs >= 0 && nackResendDelayMs <= 60_000))
      throw new RangeError("MemoryPubSub: nackResendDelayMs must be in [0, 60000]");
    if (!Number.isInteger(maxRetainedPerTopic) || maxRetainedPerTopic < 0)
      throw new RangeError("MemoryPubSub: maxRetainedPerTopic must be an integer ≥ 0");
  }

  /** Every message currently retained for `topic` (persistent mode), oldest first: e.g. the DLQ's content. */
  messages(topic: string): readonly Message[] {
    return this.retained.get(topic) ?? [];
  }

  async publish(topic: string, ...msgs: Message[]): Promise<void> {
    if (this.closer.signal.aborted) throw new Error("MemoryPubSub: publish after close()");
    if (topic === "") throw new RangeError("MemoryPubSub.publish: topic must be non-empty");
    if (this.opts.beforePublish) await this.opts.beforePublish(topic, msgs);
    const stored = msgs.map((m) => ({ uuid: m.uuid, metadata: { ...m.metadata }, payload: m.payload }));
    if (this.opts.persistent) {
      const list = this.retained.get(topic) ?? [];
      for (const m of stored) list.push(this.delivery(m, topic, this.closer.signal));
      if (list.length > this.opts.maxRetainedPerTopic) list.splice(0, list.length - this.opts.maxRetainedPerTopic);
      this.retained.set(topic, list);
    }
    for (const sub of this.subs) {
      if (sub.topic !== topic || sub.signal.aborted) continue;
      for (const m of stored) sub.queue.push(this.delivery(m, topic, sub.signal));
      sub.wake?.();
    }
  }

  async subscribe(topic: string, sink: MessageSink, signal: AbortSignal): Promise<Subscription> {
    if (this.closer.signal.aborted) throw new Error("MemoryPubSub: subscribe after close()");
    const both = AbortSignal.any([signal, this.closer.signal]);
    const sub: MemorySub = {
      topic,
      queue: (this.retained.get(topic) ?? []).map((m) => this.delivery(m, topic, both)),
      inFlight: false,
      wake: null,
      signal: both,
    };
    this.subs.add(sub);
    const closed = this.pump(sub, sink).finally(() => {
      this.subs.delete(sub);
      this.notifyIdle();
    });
    return { closed };
  }

  /** Resolves when every subscription has an empty queue and nothing in flight (test helper). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.isIdle()) {
          this.idleWaiters.delete(check);
          resolve();
        }
      };
      this.idleWaiters.add(check);
    });
  }

  async close(): Promise<void> {
    this.closer.abort();
    for (const sub of this.subs) sub.wake?.();
  }

  private isIdle(): boolean {
    for (const s of this.subs) if (s.inFlight || s.queue.length > 0) return false;
    return true;
  }

  private notifyIdle(): void {
    for (const w of [...this.idleWaiters]) w();
  }

  private delivery(m: Pick<Message, "uuid" | "metadata" | "payload">, topic: string, signal: AbortSignal): Message {
    return {
      uuid: m.uuid,
      metadata: { ...m.metadata },
      payload: m.payload,
      signal,
      context: { topic, subscriber: this.name },
    };
  }

  private async pump(sub: MemorySub, sink: MessageSink): Promise<void> {
    const onAbort = () => sub.wake?.();
    sub.signal.addEventListener("abort", onAbort);
    try {
      while (!sub.signal.aborted) {
        if (sub.queue.length === 0) {
          this.notifyIdle();
          await new Promise<void>((resolve) => (sub.wake = resolve));
          sub.wake = null;
          continue;
        }
        sub.inFlight = true;
        const batch = sub.queue.slice(0, this.opts.batchSize);
        // A fresh context per delivery attempt: a redelivered message is a new delivery.
        const fresh = batch.map((m) => ({
          ...m,
          metadata: { ...m.metadata },
          context: { topic: sub.topic, subscriber: this.name },
        }));
        const outcomes = this.opts.batchSize === 1 ? [await sink.deliver(fresh[0]!)] : await sink.deliverBatch(fresh);
        let done = 0;
        while (done < outcomes.length && outcomes[done] === "ack") done++;
        sub.queue.splice(0, done);
        // Nothing is committed here, but `idle()` promises that the store is written too.
        if (sub.queue.length === 0 && sink.flush) await sink.flush();
        sub.inFlight = false;
        if (done < fresh.length && !sub.signal.aborted && this.opts.nackResendDelayMs > 0) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, this.opts.nackResendDelayMs);
            sub.wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          sub.wake = null;
        }
      }
    } finally {
      sub.inFlight = false;
      sub.signal.removeEventListener("abort", onAbort);
    }
  }
}
