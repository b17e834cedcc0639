/**
 * `GET /api/records`: one Kafka record by position, or the records whose `_watermill_message_uuid`
 * header is a UUID (a bounded newest-first scan, {@link RECORD_SCAN_LIMITS}). Only the configured
 * consumer topics and their DLQ topics may be read ({@link allowedTopics}); the reader never joins
 * a consumer group nor commits (server/observe/records/kafka-reader.ts).
 */
import type { Encoded, RecordView } from "@/lib/api/records";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { DLQ_TOPIC_SUFFIX, dlqTopicOf } from "@/names/dlq";
import { config } from "@/server/config";
import { conventionHeaderNumber } from "@/server/transport/dlq-conventions";
import { ForbiddenError, NotFoundError, UpstreamUnavailableError, errorText } from "../core/errors";
import { KafkaLogReader } from "./kafka-reader";
import { isTopicMissing, type LogReader, type RawRecord } from "./log-reader";
import { kafkaOrEmbedded } from "./kafka-or-embedded";
import type { Masker } from "./masking";
import { MemoryLogReader } from "./memory-reader";
import { FETCH_MAX_BYTES, RECORD_SCAN_LIMITS, recordSize } from "./scan";

// ignoreBOM: a payload's leading BOM is part of what was published and is shown, not dropped.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 text when the bytes are valid UTF-8, else base64 (the encoding named). */
export function encodeBytes(b: Buffer | string): Encoded {
  if (typeof b === "string") return { encoding: "utf-8", text: b };
  try {
    return { encoding: "utf-8", text: utf8.decode(b) };
  } catch {
    return { encoding: "base64", text: b.toString("base64") };
  }
}

/** Header entries in order, a repeated header as several entries; Spring's binary DLT numbers also as numbers. */
function headerList(h: RawRecord["headers"]): RecordView["headers"] {
  return Object.entries(h).flatMap(([key, v]) =>
    (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) => {
      const number = typeof x === "string" ? null : conventionHeaderNumber(key, x);
      return { key, value: encodeBytes(x), ...(number ? { number } : {}) };
    }),
  );
}

/** The message UUID of a record: its one readable `_watermill_message_uuid` header, else null. */
export function uuidOf(r: RawRecord): string | null {
  const v = r.headers[WATERMILL_UUID_HEADER];
  if (v === undefined || Array.isArray(v)) return null;
  const e = encodeBytes(v);
  return e.encoding === "utf-8" && e.text.trim() !== "" ? e.text : null;
}

/** A raw record as the message view shows it. */
export function toRecordView(r: RawRecord): RecordView {
  return {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset.toString(),
    timestamp: new Date(r.timestamp).toISOString(),
    key: r.key === null ? null : encodeBytes(r.key),
    headers: headerList(r.headers),
    payload: r.value === null ? null : encodeBytes(r.value),
    size: recordSize(r),
    uuid: uuidOf(r),
  };
}

/**
 * A record as `mask` lets the caller see it, with `masked` listing what was masked (absent for a
 * caller who sees it whole); `size` stays the size of the record in the log.
 */
export function maskedRecordView(r: RawRecord, mask: Masker): RecordView {
  const m = mask(r);
  if (m.masked === null) return toRecordView(r);
  return { ...toRecordView(m.record), size: recordSize(r), masked: m.masked };
}

/** The topics a caller may read: `CONSUMER_TOPICS` and the DLQ topic of each. */
export function allowedTopics(consumerTopics: readonly string[] = config().CONSUMER_TOPICS): Set<string> {
  return new Set(consumerTopics.flatMap((t) => [t, dlqTopicOf(t)]));
}

/** Throws a 403 naming the rule unless `topic` is {@link allowedTopics allowed}. */
export function requireAllowedTopic(topic: string): void {
  if (!allowedTopics().has(topic)) {
    throw new ForbiddenError(
      `topic ${topic} is not readable here: only CONSUMER_TOPICS (${config().CONSUMER_TOPICS.join(", ")}) and their DLQ topics (<topic>${DLQ_TOPIC_SUFFIX})`,
    );
  }
}

const reader = kafkaOrEmbedded<LogReader>("__dedupHealthRecordReader", {
  kafka: (brokers) => new KafkaLogReader(brokers),
  embedded: (log) => new MemoryLogReader(log),
  without: "records and the DLQ are read from Kafka (set KAFKA_BROKERS) or from the embedded demo's topics",
});

/**
 * The process's record reader: Kafka's log from `KAFKA_BROKERS`, else the embedded broker's (the
 * runtime registers it); a 503 naming the variable when there is neither.
 */
export function recordReader(): LogReader {
  return reader.get();
}

/** Replaces the process's reader (tests), or with `null` closes and forgets it. */
export function setRecordReader(r: LogReader | null): Promise<void> {
  return reader.set(r);
}

/** Runs a read of the log: a missing topic → 404, a Kafka failure → 503 (typed errors pass). */
export async function kafkaRead<T>(topic: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isTopicMissing(e)) throw new NotFoundError(`topic ${topic} does not exist`);
    if (e instanceof Error && "status" in e) throw e;
    throw new UpstreamUnavailableError(`kafka: ${errorText(e)}`);
  }
}

/** The record at `offset` of `topic`/`partition` as `mask` lets the caller see it; 404 when there is none. */
export async function oneRecord(
  reader: LogReader,
  topic: string,
  partition: number,
  offset: bigint,
  mask: Masker,
): Promise<RecordView> {
  const range = (await reader.ranges(topic)).find((r) => r.partition === partition);
  if (!range) throw new NotFoundError(`partition ${partition} of ${topic} does not exist`);
  if (offset < range.low || offset >= range.high)
    throw new NotFoundError(
      `offset ${offset} of ${topic}/${partition} is outside the log (${range.low}..${range.high - 1n}: not written yet, or deleted by retention)`,
    );
  const got = await reader.fetchFrom(topic, partition, offset, FETCH_MAX_BYTES);
  const rec = got.find((r) => r.offset === offset);
  if (!rec)
    throw new NotFoundError(
      `no record at offset ${offset} of ${topic}/${partition} (compacted away, or a transaction marker)`,
    );
  return maskedRecordView(rec, mask);
}
