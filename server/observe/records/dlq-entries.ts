/**
 * DLQ records as the DLQ routes show them: the DLQ topics of `CONSUMER_TOPICS`, a record decoded
 * into its message and its entry, and the entry as a caller may see it (masked).
 */
import type { IHeaders } from "kafkajs";
import type { DlqEntry } from "@/lib/api/dlq";
import { dlqTopicOf } from "@/names/dlq";
import { config } from "@/server/config";
import { redriveTarget, type DlqMessage } from "@/server/transport/dlq-redrive";
import { readDlqConvention } from "@/server/transport/dlq-conventions";
import { decodeRecord } from "@/server/transport/watermill-codec";
import { ForbiddenError } from "../core/errors";
import type { RawRecord } from "./log-reader";
import type { Masker } from "./masking";
import { recordSize } from "./scan";

/** Records listed in a re-drive answer's preview. */
export const REDRIVE_PREVIEW = 20;

/**
 * The bounded reason class of a DLQ record, whichever stack dead-lettered it (PoisonQueue's class or
 * error text, a Spring or Connect record's exception class): server/transport/dlq-conventions.ts.
 */
export { reasonClassOf } from "@/server/transport/dlq-conventions";

/** The DLQ topics that may be browsed: one per `CONSUMER_TOPICS` entry. */
export function dlqTopics(): string[] {
  return config().CONSUMER_TOPICS.map(dlqTopicOf);
}

/** `topic`, or the first DLQ topic, when it is one of {@link dlqTopics}; a 403 otherwise. */
export function requireDlqTopic(topic: string | undefined): string {
  const all = dlqTopics();
  const t = topic ?? all[0]!;
  if (!all.includes(t))
    throw new ForbiddenError(`topic ${t} is not a DLQ topic of CONSUMER_TOPICS (${all.join(", ")})`);
  return t;
}

/** A DLQ record decoded: its message (for a re-drive) and its entry (for the list; `state` open until looked up). */
export function decodeDlq(r: RawRecord, allow: ReadonlySet<string>): { msg: DlqMessage; entry: DlqEntry } {
  const d = decodeRecord(r.headers as IHeaders, r.value);
  const msg: DlqMessage = {
    uuid: d.ok ? d.uuid : null,
    metadata: d.metadata,
    payload: d.payload,
    key: r.key,
    position: { topic: r.topic, partition: r.partition, offset: r.offset.toString() },
  };
  const target = redriveTarget(msg, allow);
  // Watermill's poison metadata, Spring's kafka_dlt-* or Connect's __connect.errors.* (raw headers: Spring's numbers are binary).
  const o = readDlqConvention(r.headers);
  return {
    msg,
    entry: {
      state: "open",
      topic: r.topic,
      partition: r.partition,
      offset: r.offset.toString(),
      poisonedAt: new Date(r.timestamp).toISOString(),
      uuid: msg.uuid,
      reasonClass: o.reasonClass,
      reason: o.reason || (d.ok ? "" : d.reason),
      handler: o.handler,
      topicPoisoned: o.topic ?? "",
      subscriber: o.subscriber,
      convention: o.convention,
      handlerIs: o.handlerIs,
      original: { partition: o.partition, offset: o.offset, timestamp: o.timestamp },
      exceptionClass: o.exceptionClass,
      redrivable: target.ok,
      ...(target.ok ? {} : { notRedrivable: target.why }),
      size: recordSize(r),
    },
  };
}

/**
 * A DLQ entry as `mask` lets the caller see it: its texts (UUID, reason, handler, subscriber, topic,
 * origin) read from the masked headers, its bounded facts (reason class, convention, whether it
 * may be re-driven, size) from the record itself; `masked` lists what was masked.
 */
export function shownDlqEntry(rec: RawRecord, real: DlqEntry, allow: ReadonlySet<string>, mask: Masker): DlqEntry {
  const m = mask(rec);
  if (m.masked === null) return real;
  const shown: DlqEntry = {
    ...decodeDlq(m.record, allow).entry,
    reasonClass: real.reasonClass,
    convention: real.convention,
    handlerIs: real.handlerIs,
    redrivable: real.redrivable,
    size: real.size,
    masked: m.masked,
  };
  if (real.notRedrivable === undefined) delete shown.notRedrivable;
  else shown.notRedrivable = real.notRedrivable;
  return shown;
}

/** Newest first: by poison time, then by offset. */
export const byNewest = (a: DlqEntry, b: DlqEntry) =>
  b.poisonedAt.localeCompare(a.poisonedAt) || Number(BigInt(b.offset) - BigInt(a.offset));
