/**
 * The DLQ browser: `GET /api/dlq` pages a DLQ topic newest first (bounded like every record scan)
 * with each record's poison metadata and its reason class; `POST /api/dlq/redrive` sends chosen
 * records back to the topic they were poisoned on, through the same code as `npm run dlq:replay`
 * (server/transport/dlq-redrive.ts) and the same allow-list (`CONSUMER_TOPICS`).
 */
import type { IHeaders } from "kafkajs";
import type { DlqEntry, DlqResponse, RedriveResponse } from "@/lib/api/dlq";
import {
  HANDLER_POISONED_KEY,
  POISON_REASON_CLASS,
  POISON_REASON_CLASSES,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  dlqTopicOf,
  type PoisonReasonClass,
} from "@/names/dedup";
import { config } from "@/server/config";
import { redriveMessage, redriveTarget, type DlqMessage } from "@/server/transport/dlq-redrive";
import { decodeRecord } from "@/server/transport/watermill-codec";
import { ForbiddenError, UpstreamUnavailableError, errorText } from "../errors";
import { isTopicMissing, type RawRecord } from "./log-reader";
import { kafkaRead, recordReader } from "./records";
import { RECORD_SCAN_LIMITS, decodeScanCursor, encodeScanCursor, recordSize, scanNewestFirst, type ScanResult } from "./scan";
import { redrivePublisher } from "./redrive-publisher";
import { entryState, recordResolutions, stateMatches, topicStates } from "./dlq-resolutions";
import type { DlqResolutionInput } from "./dlq-state";

/** Most records one re-drive call publishes (the scan bound may stop it earlier: `complete: false`). */
export const MAX_REDRIVE = 1000;
/** Records listed in a re-drive answer's preview. */
export const REDRIVE_PREVIEW = 20;

/**
 * The bounded reason class of a DLQ record: PoisonQueue's `reason_class_poisoned` when present,
 * else read from the error text the library writes (records poisoned before that header, or by
 * Watermill in Go): `marshal: …` and a key factory failure → `marshal`, a store failure names its
 * reason, a lease held elsewhere → `in_progress`; anything else → `handler_error`.
 */
export function reasonClassOf(metadata: Record<string, string>): PoisonReasonClass {
  const own = metadata[REASON_CLASS_POISONED_KEY];
  if (own && (POISON_REASON_CLASSES as readonly string[]).includes(own)) return own as PoisonReasonClass;
  const text = metadata[REASON_POISONED_KEY] ?? "";
  if (/^marshal\b/.test(text) || /dedup key of message .* could not be computed/.test(text)) return POISON_REASON_CLASS.marshal;
  const store = /dedup store failed \((redis_timeout|redis_conn)\)/.exec(text);
  if (store) return store[1] as PoisonReasonClass;
  if (/is being processed by another consumer/.test(text)) return POISON_REASON_CLASS.inProgress;
  return POISON_REASON_CLASS.handlerError;
}

/** The DLQ topics that may be browsed: one per `CONSUMER_TOPICS` entry. */
export function dlqTopics(): string[] {
  return config().CONSUMER_TOPICS.map(dlqTopicOf);
}

/** `topic`, or the first DLQ topic, when it is one of {@link dlqTopics}; a 403 otherwise. */
export function requireDlqTopic(topic: string | undefined): string {
  const all = dlqTopics();
  const t = topic ?? all[0]!;
  if (!all.includes(t)) throw new ForbiddenError(`topic ${t} is not a DLQ topic of CONSUMER_TOPICS (${all.join(", ")})`);
  return t;
}

/** A DLQ record decoded: its message (for a re-drive) and its entry (for the list; `state` open until looked up). */
export function decodeDlq(r: RawRecord, allow: ReadonlySet<string>): { msg: DlqMessage; entry: DlqEntry } {
  const d = decodeRecord(r.headers as IHeaders, r.value);
  const msg: DlqMessage = { uuid: d.ok ? d.uuid : null, metadata: d.metadata, payload: d.payload };
  const target = redriveTarget(msg, allow);
  const m = d.metadata;
  return {
    msg,
    entry: {
      state: "open",
      topic: r.topic,
      partition: r.partition,
      offset: r.offset.toString(),
      poisonedAt: new Date(r.timestamp).toISOString(),
      uuid: msg.uuid,
      reasonClass: reasonClassOf(m),
      reason: m[REASON_POISONED_KEY] ?? (d.ok ? "" : d.reason),
      handler: m[HANDLER_POISONED_KEY] ?? "",
      topicPoisoned: m[TOPIC_POISONED_KEY] ?? "",
      subscriber: m[SUBSCRIBER_POISONED_KEY] ?? "",
      redrivable: target.ok,
      ...(target.ok ? {} : { notRedrivable: target.why }),
      size: recordSize(r),
    },
  };
}

const byNewest = (a: DlqEntry, b: DlqEntry) => b.poisonedAt.localeCompare(a.poisonedAt) || Number(BigInt(b.offset) - BigInt(a.offset));

/** Builds `GET /api/dlq`: one page, newest first, filtered by handler and reason class. */
export async function listDlq(q: { topic?: string; handler?: string; reason?: string; state?: string; cursor?: string; limit: number }): Promise<DlqResponse> {
  const topic = requireDlqTopic(q.topic);
  const from = decodeScanCursor(q.cursor);
  const allow = new Set(config().CONSUMER_TOPICS);
  const matched: DlqEntry[] = [];
  const reasons: Record<string, number> = {};
  const states = await kafkaRead(topic, () => topicStates(topic));
  const r = await kafkaRead(topic, () =>
    scanNewestFirst(recordReader(), topic, from, RECORD_SCAN_LIMITS, (rec) => {
      const entry = { ...decodeDlq(rec, allow).entry, ...entryState(states.of(rec)) };
      if (q.handler && entry.handler !== q.handler) return;
      if (!stateMatches(q.state, entry)) return;
      reasons[entry.reasonClass] = (reasons[entry.reasonClass] ?? 0) + 1;
      if (q.reason && entry.reasonClass !== q.reason) return;
      matched.push(entry);
    }, () => matched.length >= q.limit).catch((e: unknown): ScanResult => {
      // A DLQ topic nobody has poisoned a record into yet may not exist: an empty DLQ, not an error.
      if (isTopicMissing(e)) return { scanned: { records: 0, bytes: 0, ms: 0 }, complete: true, left: new Map() };
      throw e;
    }),
  );
  matched.sort(byNewest);
  const entries = matched.slice(0, q.limit);
  // A partition whose matches did not all fit resumes right above the newest one left out.
  const left = new Map(r.left);
  for (const e of matched.slice(q.limit)) {
    const end = BigInt(e.offset) + 1n;
    if ((left.get(e.partition) ?? -1n) < end) left.set(e.partition, end);
  }
  return { generatedAt: new Date().toISOString(), topic, entries, reasons, cursor: encodeScanCursor(left), scanned: r.scanned, limits: RECORD_SCAN_LIMITS };
}

/** What `POST /api/dlq/redrive` takes. */
export interface RedriveRequest {
  topic?: string;
  uuids?: string[];
  filter?: { handler?: string; reason?: string };
  dryRun: boolean;
}

/**
 * Builds `POST /api/dlq/redrive`: the DLQ records matching the UUIDs (or the filter), newest
 * first and one per UUID, within the scan bound; a dry run publishes nothing. A filter leaves
 * records already re-driven or discarded alone (`notOpen`); UUIDs named explicitly are re-driven
 * whatever their state. Each published record becomes `redriven` by `who` (./dlq-state).
 */
export async function redriveDlq(body: RedriveRequest, who: string): Promise<RedriveResponse & { topic: string }> {
  const topic = requireDlqTopic(body.topic);
  const allow = new Set(config().CONSUMER_TOPICS);
  const wanted = body.uuids ? new Set(body.uuids) : null;
  const seen = new Set<string>();
  const chosen: Array<{ msg: DlqMessage; entry: DlqEntry }> = [];
  let skipped = 0;
  let notOpen = 0;
  const states = await kafkaRead(topic, () => topicStates(topic));
  const r = await kafkaRead(topic, () =>
    scanNewestFirst(recordReader(), topic, null, RECORD_SCAN_LIMITS, (rec) => {
      const d = decodeDlq(rec, allow);
      const e = d.entry;
      if (wanted ? !(e.uuid && wanted.has(e.uuid)) : (body.filter?.handler && e.handler !== body.filter.handler) || (body.filter?.reason && e.reasonClass !== body.filter.reason)) return;
      if (e.uuid && seen.has(e.uuid)) return; // an older copy of a message already chosen
      if (e.uuid) seen.add(e.uuid);
      if (!wanted && states.of(rec).state !== "open") notOpen++;
      else if (!e.redrivable) skipped++;
      else if (chosen.length < MAX_REDRIVE) chosen.push(d);
    }, () => chosen.length >= MAX_REDRIVE || (wanted !== null && seen.size >= wanted.size)),
  );
  chosen.sort((a, b) => byNewest(a.entry, b.entry));
  let redriven = 0;
  const resolved: DlqResolutionInput[] = [];
  if (!body.dryRun) {
    const publisher = redrivePublisher();
    try {
      for (const c of chosen) {
        try {
          const to = await redriveMessage(publisher, c.msg, allow);
          resolved.push({ partition: c.entry.partition, offset: c.entry.offset, state: "redriven", who, to: typeof to === "string" ? { topic: to, uuid: c.msg.uuid! } : to });
        } catch (e) {
          throw new UpstreamUnavailableError(`kafka: re-drove ${redriven} of ${chosen.length}, then the publish failed: ${errorText(e)}`);
        }
        redriven++;
      }
    } finally {
      // What was published is re-driven, even when a later publish failed.
      await recordResolutions(topic, resolved);
    }
  }
  const preview = chosen.slice(0, REDRIVE_PREVIEW).map(({ entry: e }) => ({ uuid: e.uuid!, topic: e.topicPoisoned, handler: e.handler, reasonClass: e.reasonClass, offset: e.offset, partition: e.partition }));
  const complete = r.complete || (wanted !== null && seen.size >= wanted.size);
  return { topic, dryRun: body.dryRun, matched: chosen.length, redriven, skipped, notOpen, preview, complete };
}

/**
 * The `service` / `handler` a re-drive concerns, for its audit entry and chart marker: this app's
 * service, and the handler asked for — or the one handler every re-driven record belongs to.
 */
export function redriveScope(body: RedriveRequest, r: RedriveResponse): Record<string, string> {
  const handlers = new Set(r.preview.map((p) => p.handler));
  const handler = body.filter?.handler ?? (handlers.size === 1 && r.matched <= r.preview.length ? [...handlers][0] : undefined);
  return { service: config().SERVICE_NAME, ...(handler ? { handler } : {}) };
}
