/**
 * The one per-partition consume loop both subscribers run (kafkajs's `eachBatch` in
 * {@link KafkaSubscriber}, the embedded broker's partition pump in `MemoryGroupSubscriber`):
 * records → chunk of decoded messages → `deliver` / `deliverBatch` → ack the acked prefix (after
 * the `beforeCommit` hook) → on a nack commit what was acked and redeliver from the first message
 * without an ack; a record without a readable UUID goes to the DLQ (and `onUnreadable`) and is
 * acked. The transports differ only in the hooks: where offsets are kept, how a redelivery seeks,
 * whether a heartbeat runs.
 */
import { type Message, type Outcome, runOnce, type MessageSink } from "@/server/dedup";
import {
  HANDLER_POISONED_KEY,
  OFFSET_POISONED_KEY,
  PARTITION_POISONED_KEY,
  POISON_REASON_CLASS,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
} from "@/names/dedup";
import { dlqCopyKey } from "@/names/dlq";
import type { IHeaders } from "kafkajs";
import type { ChunkBegin } from "./kafka-transactions";
import type { SubscriberOptions, UnreadableRecord } from "./subscriber-options";
import { transactChunk, transactOffset } from "./transactional-chunk";
import { decodeRecord, type Decoded } from "./watermill-codec";

export type { BeforeCommit, SubscriberOptions, UnreadableRecord } from "./subscriber-options";

/** A stored record as both transports hold it: Watermill headers and a value. */
export interface PumpRecord {
  headers?: IHeaders;
  /** The record key (Kafka's; the embedded broker's records have none): kept as `Message.key`. */
  key?: Buffer | null;
  value: Buffer | null;
}

/** One run of the loop over consecutive records of one partition, and the transport's hooks. */
export interface PartitionRun<R extends PumpRecord> {
  topic: string;
  partition: number;
  /** The records; the run reads from `start` while `i < records.length` (the array may grow). */
  records: readonly R[];
  start: number;
  /** The offset of `records[i]`. */
  offsetOf: (rec: R, i: number) => string;
  sink: MessageSink;
  /** The subscriber's options (chunkSize and nackDelayMs resolved). */
  options: SubscriberOptions & { chunkSize: number; nackDelayMs: number };
  /** `context.subscriber` of each message and `subscriber_poisoned` of a DLQ copy: `<transport>/<replica>`. */
  subscriber: string;
  /** Each message's signal: aborted when the replica crashes. */
  signal: AbortSignal;
  /** Whether a one-message sink call uses `deliver` (else `deliverBatch`). */
  deliverSingly: (chunk: readonly Message[]) => boolean;
  /** True when the run must stop before the next chunk (stop, rebalance, crash). */
  halt: () => boolean;
  /** Marks every record through `offset` done (committed by `commit`, or by the transport's own schedule). */
  ack: (offset: string) => void | Promise<void>;
  /** Commits what was acked (called only when something was acked since the last call). */
  commit: () => Promise<void>;
  /** Redelivers from `offset` (a nack, or a DLQ publish that failed); the run ends after it. */
  redeliver: (offset: string) => void;
  /** `beforeCommit` said crash: the replica leaves without committing. */
  onCrash: () => void;
  /** Keeps the membership alive: every `intervalMs` while a chunk runs, and between chunks (a throw there ends the run after a commit). */
  heartbeat?: { intervalMs: number; beat: () => Promise<void> };
  /**
   * The Kafka-transactions mode: begins the transaction of a chunk starting at `first`; each chunk
   * then commits its outputs and offsets in it (transactional-chunk.ts) — `ack` only moves the
   * position and `commit` is never called.
   */
  transaction?: (first: string) => Promise<ChunkBegin>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Consumes `run.records` from `run.start` until they are exhausted, the run halts, a redelivery
 * was asked for, or the replica crashed. Offsets are acked per chunk (only a chunk's acked prefix)
 * and committed once per run (its end, a nack, a halt, a failed heartbeat).
 */
export async function pumpPartition<R extends PumpRecord>(run: PartitionRun<R>): Promise<void> {
  const { records: all, options: o } = run;
  let acked = false;
  const commit = async () => {
    if (!acked) return;
    acked = false;
    await run.commit();
  };

  let i = run.start;
  while (i < all.length) {
    if (run.halt()) return commit();
    const chunk: Message[] = [];
    let unreadable: UnreadableRecord | null = null;
    while (i < all.length && chunk.length < o.chunkSize) {
      const rec = all[i]!;
      const offset = run.offsetOf(rec, i);
      const d = decodeRecord(rec.headers, rec.value);
      if (d.ok) {
        chunk.push(toMessage(run, d, rec, offset));
        i++;
        continue;
      }
      if (chunk.length === 0) {
        unreadable = toUnreadable(run, d, rec, offset);
        i++;
      }
      break;
    }

    if (chunk.length > 0 && run.transaction) {
      if (!(await transactChunk(run, chunk, () => deliverChunk(run, chunk)))) return;
    } else if (chunk.length > 0) {
      const outcomes = await deliverChunk(run, chunk);
      let okCount = 0;
      while (okCount < outcomes.length && outcomes[okCount] === "ack") okCount++;
      if (okCount > 0) {
        if (o.beforeCommit && o.beforeCommit(chunk.slice(0, okCount)) === "crash") {
          run.onCrash();
          return;
        }
        await run.ack(chunk[okCount - 1]!.context.offset!);
        acked = true;
      }
      if (okCount < chunk.length) {
        // A nack (or a stop mid-chunk): redeliver from the first message without an ack; nothing
        // later of this partition is acked because this run ends here.
        await commit();
        if (outcomes[okCount] === "nack" && o.nackDelayMs > 0) await sleep(o.nackDelayMs);
        run.redeliver(chunk[okCount]!.context.offset!);
        return;
      }
    } else if (unreadable) {
      if (!(await dlqUnreadable(run, unreadable))) {
        // The DLQ publish failed: commit what was acked and read the record again.
        await commit();
        if (o.nackDelayMs > 0) await sleep(o.nackDelayMs);
        run.redeliver(unreadable.offset);
        return;
      }
      if (run.transaction) {
        if (!(await transactOffset(run, unreadable.offset))) return;
      } else {
        await run.ack(unreadable.offset);
        acked = true;
      }
    }
    if (i >= all.length || !run.heartbeat) continue;
    // Keeps the membership alive during a long run; throws when a rebalance is in progress: what
    // was acked is committed first (best effort), the transport rejoins and the owner re-reads the rest.
    try {
      await run.heartbeat.beat();
    } catch (e) {
      await commit();
      throw e;
    }
  }
  await commit();
}

/** The message of a decoded record, as the sink receives it. */
function toMessage<R extends PumpRecord>(
  run: PartitionRun<R>,
  d: Extract<Decoded, { ok: true }>,
  rec: R,
  offset: string,
): Message {
  return {
    uuid: d.uuid,
    metadata: d.metadata,
    payload: d.payload,
    key: rec.key ?? undefined,
    signal: run.signal,
    context: { topic: run.topic, partition: run.partition, offset, subscriber: run.subscriber },
  };
}

/** A record that could not be decoded, as the DLQ and `onUnreadable` receive it. */
function toUnreadable<R extends PumpRecord>(
  run: PartitionRun<R>,
  d: Extract<Decoded, { ok: false }>,
  rec: R,
  offset: string,
): UnreadableRecord {
  return {
    topic: run.topic,
    partition: run.partition,
    offset,
    reason: d.reason,
    metadata: d.metadata,
    payload: d.payload,
    key: rec.key ?? undefined,
  };
}

/**
 * The sink's outcomes for one chunk. A slow chunk (under fail-closed each message may spend its
 * whole retry budget) must not get the member evicted: its commits would be refused and the chunk
 * processed (and poisoned) again, so the heartbeat runs meanwhile. Its errors (a rebalance in
 * progress) are left to the heartbeat after the chunk.
 */
async function deliverChunk<R extends PumpRecord>(run: PartitionRun<R>, chunk: Message[]): Promise<Outcome[]> {
  const hb = run.heartbeat;
  const beat = hb ? setInterval(() => void hb.beat().catch(() => undefined), hb.intervalMs) : undefined;
  try {
    return run.deliverSingly(chunk) ? [await run.sink.deliver(chunk[0]!)] : await run.sink.deliverBatch(chunk);
  } finally {
    clearInterval(beat);
  }
}

/**
 * An unreadable record this subscriber owns goes to the DLQ (one copy per source record when the
 * DLQ has a repository) and to `onUnreadable`; one it does not own is only skipped. False when the
 * DLQ publish failed: the record must be read again, not acked.
 */
async function dlqUnreadable<R extends PumpRecord>(run: PartitionRun<R>, rec: UnreadableRecord): Promise<boolean> {
  const o = run.options;
  if (o.claimsUnreadable && !o.claimsUnreadable(rec)) return true;
  let first = true;
  if (o.dlq) {
    const { publisher, topic: dlqTopic, repository } = o.dlq;
    const send = () => publisher.publish(dlqTopic, unreadableToDlq(rec, run.subscriber, o.handler ?? o.groupId));
    try {
      if (repository)
        first = (await runOnce(repository, dlqCopyKey(rec.topic, rec.partition, rec.offset), send)) === "ran";
      else await send();
    } catch {
      return false;
    }
  }
  try {
    // A record whose copy is already in the DLQ was counted when it was sent.
    if (first) o.onUnreadable?.(rec);
  } catch {
    // A broken observer must not stop consumption.
  }
  return true;
}

/**
 * The DLQ copy of an unreadable record. It has no UUID (the transport never invents one): the
 * Message built here carries a placeholder only in memory; the publishers write it WITHOUT a
 * `_watermill_message_uuid` header ({@link NO_UUID}). `handler_poisoned` is the handler whose
 * subscriber owns the record, so it shows on that handler's DLQ panel like any other poisoned message.
 */
export function unreadableToDlq(rec: UnreadableRecord, subscriber: string, handler: string): Message {
  return {
    uuid: NO_UUID,
    metadata: {
      ...rec.metadata,
      [REASON_POISONED_KEY]: rec.reason,
      [TOPIC_POISONED_KEY]: rec.topic,
      [HANDLER_POISONED_KEY]: handler,
      [SUBSCRIBER_POISONED_KEY]: subscriber,
      [REASON_CLASS_POISONED_KEY]: POISON_REASON_CLASS.marshal,
      [PARTITION_POISONED_KEY]: String(rec.partition),
      [OFFSET_POISONED_KEY]: rec.offset,
    },
    payload: rec.payload,
    ...(rec.key ? { key: rec.key } : {}),
    signal: new AbortController().signal,
    context: {},
  };
}

/** Placeholder uuid of a DLQ copy of a record that had none; publishers omit the UUID header for it. */
export const NO_UUID = "\u0000no-uuid";
