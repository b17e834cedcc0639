/**
 * Re-driving one DLQ message — the one way both `npm run dlq:replay` (dlq-replay.ts) and
 * `POST /api/dlq/redrive` (server/observe/routes/dlq-redrive.ts) send a message back: to the topic it was
 * poisoned on (`topic_poisoned`), with its Kafka record key (the same partition as the original:
 * per-key order holds) and its metadata minus the poison keys, and ONLY to an allowed topic — the
 * configured consumer topics — so a DLQ record cannot be used to write elsewhere.
 *
 * Two modes ({@link REDRIVE_MODE}): `same-uuid` (a replay is the same event: a correct Deduplicator
 * processes it once) and `new-uuid` (a UUID derived from the DLQ record's position, the original in
 * `redriven_from_uuid`). A `payload_conflict` record defaults to `new-uuid` and is refused in
 * `same-uuid`: its UUID's `done` key holds the other payload's fingerprint, so the copy would
 * conflict again and come straight back to the DLQ.
 */
import { createHash } from "node:crypto";
import type { Message, Publisher } from "@/server/dedup";
import {
  POISON_METADATA_KEYS,
  POISON_REASON_CLASS,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { REDRIVE_MODE, REDRIVEN_FROM_UUID_KEY, type RedriveMode } from "@/names/dlq";
import { CONNECT_ERRORS, DLQ_CONVENTION, SPRING_DLT } from "@/names/dlq-conventions";
import { isConventionHeader, readDlqConvention } from "./dlq-conventions";

/** Where a DLQ record sits: `topic` is the DLQ topic. */
export interface DlqPosition {
  topic: string;
  partition: number;
  offset: string;
}

/** A DLQ message as decoded from its record. */
export interface DlqMessage {
  /** `null`: the record had no readable UUID (a marshal failure): it cannot be re-driven. */
  uuid: string | null;
  metadata: Record<string, string>;
  payload: Uint8Array;
  /** The DLQ record's key: PoisonQueue keeps the original record's key, and a re-drive publishes with it. */
  key?: Uint8Array | null;
  /** The DLQ record's own position: what a `new-uuid` re-drive derives its UUID from. */
  position?: DlqPosition;
}

/** Where a DLQ message would go and as which UUID, or why it cannot. */
export type RedriveTarget = { ok: true; topic: string; mode: RedriveMode; uuid: string } | { ok: false; why: string };

/** Why a record without a UUID is not re-driven (the answer's per-record reason). */
export const NO_UUID_WHY = "no message UUID (a marshal failure): fix the producer and re-publish";

/** Why a same-UUID re-drive of a payload conflict is refused (the answer's per-record reason). */
export const CONFLICT_LOOP_WHY =
  "would loop: the done key holds another payload's fingerprint; re-drive with mode new-uuid";

/** Whether a DLQ record was poisoned by a payload conflict (its class header, or the error text of records poisoned before it). */
export function isPayloadConflict(metadata: Record<string, string>): boolean {
  return (
    metadata[REASON_CLASS_POISONED_KEY] === POISON_REASON_CLASS.payloadConflict ||
    /^payload conflict on /.test(metadata[REASON_POISONED_KEY] ?? "")
  );
}

/** The mode a record gets when none is asked for: `new-uuid` for a payload conflict, else `same-uuid`. */
export function defaultRedriveMode(msg: Pick<DlqMessage, "metadata">): RedriveMode {
  return isPayloadConflict(msg.metadata) ? REDRIVE_MODE.newUuid : REDRIVE_MODE.sameUuid;
}

/**
 * The UUID a `new-uuid` re-drive gives the record at `p`: sha256 of `<dlqTopic>/<partition>/<offset>`
 * as an RFC 9562 version-8 UUID. Deterministic, so re-driving the same record again publishes the
 * same new UUID and the Deduplicator swallows the second copy.
 */
export function redriveUuid(p: DlqPosition): string {
  const h = createHash("sha256").update(`${p.topic}/${p.partition}/${p.offset}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * Where `msg` would be re-driven in `mode` (default {@link defaultRedriveMode}): its original topic
 * (`topic_poisoned`, or a Spring / Connect record's `kafka_dlt-original-topic` /
 * `__connect.errors.topic`: ./dlq-conventions), when it has a UUID and that topic is in
 * `allowTopics`; refused for a same-UUID re-drive of a payload conflict ({@link CONFLICT_LOOP_WHY})
 * and for a new UUID without a position. A Spring or Connect record keeps the original message's
 * headers, so its UUID is the original's `_watermill_message_uuid`; without one it is refused.
 */
export function redriveTarget(
  msg: DlqMessage,
  allowTopics: ReadonlySet<string>,
  mode: RedriveMode = defaultRedriveMode(msg),
): RedriveTarget {
  const origin = readDlqConvention(msg.metadata);
  const other = origin.convention === DLQ_CONVENTION.spring || origin.convention === DLQ_CONVENTION.connect;
  if (msg.uuid === null)
    return {
      ok: false,
      why: other
        ? `no ${WATERMILL_UUID_HEADER} header in the original message's headers (a ${origin.convention} DLQ record): a re-drive publishes the message under its UUID; re-publish it from its producer`
        : NO_UUID_WHY,
    };
  const topic = origin.topic;
  const header = other
    ? origin.convention === DLQ_CONVENTION.spring
      ? SPRING_DLT.originalTopic
      : CONNECT_ERRORS.topic
    : TOPIC_POISONED_KEY;
  if (!topic) return { ok: false, why: other ? `no ${header} header` : "no topic_poisoned header" };
  if (!allowTopics.has(topic))
    return { ok: false, why: `${header} ${topic} is not one of the allowed consumer topics (CONSUMER_TOPICS)` };
  if (mode === REDRIVE_MODE.sameUuid)
    return isPayloadConflict(msg.metadata)
      ? { ok: false, why: CONFLICT_LOOP_WHY }
      : { ok: true, topic, mode, uuid: msg.uuid };
  if (!msg.position) return { ok: false, why: "no DLQ position to derive a new UUID from" };
  return { ok: true, topic, mode, uuid: redriveUuid(msg.position) };
}

/** The metadata a re-driven message carries: its own, minus every key PoisonQueue (or Spring's or Connect's DLQ) added. */
export function redrivenMetadata(metadata: Record<string, string>): Record<string, string> {
  const out = { ...metadata };
  for (const k of POISON_METADATA_KEYS) delete out[k];
  // A Spring or Connect DLQ record's headers describe the failure, not the message.
  for (const k of Object.keys(out)) if (isConventionHeader(k)) delete out[k];
  return out;
}

/** Where a re-driven message landed: topic, and the partition and offset when the publisher reports them (Kafka does). */
export interface RedriveDestination {
  topic: string;
  partition?: number;
  offset?: string;
  /** The UUID it was published with (a new one in `new-uuid` mode). */
  uuid: string;
}

/** A publisher that says where a record landed (Kafka's RecordMetadata): {@link redriveMessage} records it. */
export interface PositionedPublisher extends Publisher {
  publishAt(topic: string, msg: Message): Promise<{ partition: number; offset: string }>;
}

function isPositioned(p: Publisher): p is PositionedPublisher {
  return typeof (p as Partial<PositionedPublisher>).publishAt === "function";
}

/** Options of {@link redriveMessage}. */
export interface RedriveOptions {
  /** @default {@link defaultRedriveMode} of the record */
  mode?: RedriveMode;
  /** @default a signal that never aborts */
  signal?: AbortSignal;
}

/**
 * Publishes `msg` back to its origin topic ({@link redriveTarget}) with its record key; returns
 * where it landed, or throws a `RangeError` saying why it may not be re-driven.
 */
export async function redriveMessage(
  publisher: Publisher,
  msg: DlqMessage,
  allowTopics: ReadonlySet<string>,
  options: RedriveOptions = {},
): Promise<RedriveDestination> {
  const target = redriveTarget(msg, allowTopics, options.mode);
  if (!target.ok) throw new RangeError(`cannot re-drive: ${target.why}`);
  const metadata = redrivenMetadata(msg.metadata);
  if (target.uuid !== msg.uuid) metadata[REDRIVEN_FROM_UUID_KEY] = msg.uuid!;
  const out: Message = {
    uuid: target.uuid,
    metadata,
    payload: msg.payload,
    ...(msg.key ? { key: msg.key } : {}),
    signal: options.signal ?? new AbortController().signal,
    context: {},
  };
  if (isPositioned(publisher))
    return { topic: target.topic, ...(await publisher.publishAt(target.topic, out)), uuid: target.uuid };
  await publisher.publish(target.topic, out);
  return { topic: target.topic, uuid: target.uuid };
}

/**
 * Paces a bulk re-drive to `perSecond` records per second, so that re-driving a thousand records
 * does not starve the live traffic of the topic they go back to: call `wait()` before each record;
 * the n-th call resolves no earlier than n / perSecond seconds after the first.
 * @throws RangeError when `perSecond` is not in [1, 10000].
 */
export function redrivePacer(perSecond: number): { wait(signal?: AbortSignal): Promise<void> } {
  if (!(Number.isFinite(perSecond) && perSecond >= 1 && perSecond <= 10_000))
    throw new RangeError("redrivePacer: records per second must be in [1, 10000] (DLQ_REDRIVE_RATE, --rate)");
  let start = 0;
  let n = 0;
  return {
    async wait(signal) {
      if (n === 0) start = Date.now();
      const due = start + (n++ * 1000) / perSecond;
      const ms = due - Date.now();
      if (ms <= 0 || signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
    },
  };
}
