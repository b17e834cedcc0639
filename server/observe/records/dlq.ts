/**
 * The DLQ browser: `GET /api/dlq` pages a DLQ topic newest first (bounded like every record scan)
 * with each record's poison metadata and its reason class; `POST /api/dlq/redrive` sends chosen
 * records back to the topic they were poisoned on, through the same code as `npm run dlq:replay`
 * (server/transport/dlq-redrive.ts) and the same allow-list (`CONSUMER_TOPICS`).
 */
import type { IHeaders } from "kafkajs";
import type { DlqEntry, DlqResponse, RedriveResponse } from "@/lib/api/dlq";
import { MASK_MARKER } from "@/lib/api/masking";
import { dlqTopicOf, type RedriveMode } from "@/names/dedup";
import { config } from "@/server/config";
import { redriveMessage, redrivePacer, redriveTarget, type DlqMessage } from "@/server/transport/dlq-redrive";
import { readDlqConvention } from "@/server/transport/dlq-conventions";
import { decodeRecord } from "@/server/transport/watermill-codec";
import { BadRequestError, ForbiddenError, UpstreamUnavailableError, errorText } from "../errors";
import { isTopicMissing, type RawRecord } from "./log-reader";
import type { Masker } from "./masking";
import { kafkaRead, recordReader } from "./records";
import {
  RECORD_SCAN_LIMITS,
  decodeScanCursor,
  encodeScanCursor,
  recordSize,
  scanNewestFirst,
  type ScanResult,
} from "./scan";
import { redrivePublisher } from "./redrive-publisher";
import { entryState, recordResolutions, stateMatches, topicStates } from "./dlq-resolutions";
import { positionKey, type DlqResolutionInput } from "./dlq-state";
import { keepRedrivePreview, takeRedrivePreview, type RedrivePreview } from "./redrive-previews";

/** Most records one re-drive call publishes (the scan bound may stop it earlier: `complete: false`). */
export const MAX_REDRIVE = 1000;
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

const byNewest = (a: DlqEntry, b: DlqEntry) =>
  b.poisonedAt.localeCompare(a.poisonedAt) || Number(BigInt(b.offset) - BigInt(a.offset));

/** Builds `GET /api/dlq`: one page, newest first, filtered by handler (as the caller sees it, masked or not) and reason class. */
export async function listDlq(
  q: { topic?: string; handler?: string; reason?: string; state?: string; cursor?: string; limit: number },
  mask: Masker,
): Promise<DlqResponse> {
  const topic = requireDlqTopic(q.topic);
  const from = decodeScanCursor(q.cursor);
  const allow = new Set(config().CONSUMER_TOPICS);
  const matched: DlqEntry[] = [];
  const reasons: Record<string, number> = {};
  const states = await kafkaRead(topic, () => topicStates(topic));
  const r = await kafkaRead(topic, () =>
    scanNewestFirst(
      recordReader(),
      topic,
      from,
      RECORD_SCAN_LIMITS,
      (rec) => {
        const entry = {
          ...shownDlqEntry(rec, decodeDlq(rec, allow).entry, allow, mask),
          ...entryState(states.of(rec)),
        };
        if (q.handler && entry.handler !== q.handler) return;
        if (!stateMatches(q.state, entry)) return;
        reasons[entry.reasonClass] = (reasons[entry.reasonClass] ?? 0) + 1;
        if (q.reason && entry.reasonClass !== q.reason) return;
        matched.push(entry);
      },
      () => matched.length >= q.limit,
    ).catch((e: unknown): ScanResult => {
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
  return {
    generatedAt: new Date().toISOString(),
    topic,
    entries,
    reasons,
    cursor: encodeScanCursor(left),
    scanned: r.scanned,
    limits: RECORD_SCAN_LIMITS,
  };
}

/** What `POST /api/dlq/redrive` takes. */
export interface RedriveRequest {
  topic?: string;
  uuids?: string[];
  filter?: { handler?: string; reason?: string };
  /** Absent: each record's default (`new-uuid` for a payload conflict). */
  mode?: RedriveMode;
  /** The dry run a real re-drive of a filter is bound to (./redrive-previews). */
  previewId?: string;
  dryRun: boolean;
}

/** What a re-drive touched, in full (the audit keeps the first of each: `touchedList`); not part of the HTTP answer. */
export interface RedriveTouched {
  /** The DLQ records' UUIDs. */
  uuids: string[];
  /** The DLQ records, `<dlqTopic>/<partition>/<offset>`. */
  sourceOffsets: string[];
  /** Where each was published, `<topic>/<partition>/<offset>` (none in a dry run). */
  destinationOffsets: string[];
  /** The handlers the records were poisoned in, as read (unmasked: the audit's scope). */
  handlers: string[];
}

/** A re-drive's selection as its preview keeps it: the filter and the mode. */
const selectionOf = (b: RedriveRequest) => JSON.stringify({ filter: b.filter ?? {}, mode: b.mode ?? null });

/**
 * The dry run a real re-drive of a filter acts on: required (400 without it, or when it expired or
 * asked for another selection), so the real run sends no record its preview did not show.
 */
function boundPreview(b: RedriveRequest, topic: string): RedrivePreview | null {
  if (b.dryRun || b.uuids) return null;
  if (!b.previewId)
    throw new BadRequestError(
      "previewId: a re-drive of a filter acts on what its dry run showed; run the dry run and send its previewId",
    );
  const p = takeRedrivePreview(b.previewId);
  if (!p)
    throw new BadRequestError(
      "previewId: unknown or expired (a preview is kept 5 min and used once); run the dry run again",
    );
  if (p.topic !== topic || p.selection !== selectionOf(b))
    throw new BadRequestError(
      "previewId: the dry run was of another topic, filter or mode; run the dry run of this one",
    );
  return p;
}

/**
 * Builds `POST /api/dlq/redrive`: the DLQ records matching the UUIDs (or the filter), newest
 * first and one per UUID, within the scan bound; a dry run publishes nothing. A filter leaves
 * records already re-driven or discarded alone (`notOpen`); UUIDs named explicitly are re-driven
 * whatever their state. Each published record becomes `redriven` by `who` (./dlq-state). The
 * records are chosen and sent whole; the previews show them as `mask` lets the caller see them.
 */
export async function redriveDlq(
  body: RedriveRequest,
  who: string,
  mask: Masker,
): Promise<RedriveResponse & { topic: string; readonly touched?: RedriveTouched }> {
  const topic = requireDlqTopic(body.topic);
  const allow = new Set(config().CONSUMER_TOPICS);
  const wanted = body.uuids ? new Set(body.uuids) : null;
  const bound = boundPreview(body, topic);
  const seen = new Set<string>();
  const chosen: Array<{
    msg: DlqMessage;
    entry: DlqEntry;
    shown: DlqEntry;
    target: { mode: RedriveMode; uuid: string };
  }> = [];
  const skippedPreview: RedriveResponse["skippedPreview"] = [];
  let skipped = 0;
  const skip = (e: DlqEntry, why: string) => {
    if (skipped++ < REDRIVE_PREVIEW)
      skippedPreview.push({
        uuid: e.uuid,
        topic: e.topicPoisoned,
        handler: e.handler,
        reasonClass: e.reasonClass,
        offset: e.offset,
        partition: e.partition,
        why,
      });
  };
  let notOpen = 0;
  const states = await kafkaRead(topic, () => topicStates(topic));
  const r = await kafkaRead(topic, () =>
    scanNewestFirst(
      recordReader(),
      topic,
      null,
      RECORD_SCAN_LIMITS,
      (rec) => {
        const d = decodeDlq(rec, allow);
        const e = d.entry;
        if (
          wanted
            ? !(e.uuid && wanted.has(e.uuid))
            : (body.filter?.handler && e.handler !== body.filter.handler) ||
              (body.filter?.reason && e.reasonClass !== body.filter.reason)
        )
          return;
        if (bound && !bound.positions.has(positionKey(rec))) return; // not what the dry run showed
        if (e.uuid && seen.has(e.uuid)) return; // an older copy of a message already chosen
        if (e.uuid) seen.add(e.uuid);
        if (!wanted && states.of(rec).state !== "open") notOpen++;
        else {
          const t = redriveTarget(d.msg, allow, body.mode);
          const shown = shownDlqEntry(rec, e, allow, mask);
          if (!t.ok) skip(shown, t.why);
          else if (chosen.length < MAX_REDRIVE) chosen.push({ ...d, shown, target: t });
        }
      },
      () => chosen.length >= MAX_REDRIVE || (wanted !== null && seen.size >= wanted.size),
    ),
  );
  chosen.sort((a, b) => byNewest(a.entry, b.entry));
  let redriven = 0;
  const resolved: DlqResolutionInput[] = [];
  const destinationOffsets: string[] = [];
  const rate = config().DLQ_REDRIVE_RATE;
  if (!body.dryRun) {
    const publisher = redrivePublisher();
    const pacer = redrivePacer(rate);
    try {
      for (const c of chosen) {
        try {
          await pacer.wait();
          const to = await redriveMessage(publisher, c.msg, allow, { mode: body.mode });
          destinationOffsets.push(`${to.topic}/${to.partition ?? "?"}/${to.offset ?? "?"}`);
          resolved.push({
            partition: c.entry.partition,
            offset: c.entry.offset,
            state: "redriven",
            who,
            to: typeof to === "string" ? { topic: to, uuid: c.msg.uuid! } : to,
          });
        } catch (e) {
          throw new UpstreamUnavailableError(
            `kafka: re-drove ${redriven} of ${chosen.length}, then the publish failed: ${errorText(e)}`,
          );
        }
        redriven++;
      }
    } finally {
      // What was published is re-driven, even when a later publish failed.
      await recordResolutions(topic, resolved);
    }
  }
  // A masked UUID stays masked where it is sent as is (same-uuid); a UUID derived from the position is not the record's.
  const preview = chosen
    .slice(0, REDRIVE_PREVIEW)
    .map(({ entry, shown: e, target: t }) => ({
      uuid: e.uuid ?? MASK_MARKER,
      topic: e.topicPoisoned,
      handler: e.handler,
      reasonClass: e.reasonClass,
      offset: e.offset,
      partition: e.partition,
      mode: t.mode,
      sendUuid: t.uuid === entry.uuid ? (e.uuid ?? MASK_MARKER) : t.uuid,
    }));
  const complete = r.complete || (wanted !== null && seen.size >= wanted.size);
  const previewId =
    body.dryRun && !wanted
      ? keepRedrivePreview({
          topic,
          selection: selectionOf(body),
          positions: new Set(chosen.map((c) => positionKey(c.entry))),
        })
      : undefined;
  const answer = {
    topic,
    dryRun: body.dryRun,
    matched: chosen.length,
    redriven,
    skipped,
    notOpen,
    preview,
    skippedPreview,
    ratePerSecond: rate,
    complete,
    ...(previewId ? { previewId } : {}),
  };
  // The full lists stay out of the HTTP answer (not enumerable: JSON leaves them out); the audit reads them.
  const touched: RedriveTouched = {
    uuids: chosen.map((c) => c.msg.uuid!),
    sourceOffsets: chosen.map((c) => `${topic}/${c.entry.partition}/${c.entry.offset}`),
    destinationOffsets,
    handlers: [...new Set(chosen.map((c) => c.entry.handler))],
  };
  return Object.defineProperty(answer, "touched", { value: touched, enumerable: false });
}

/**
 * The `service` / `handler` a re-drive concerns, for its audit entry and chart marker: this app's
 * service, and the handler asked for — or the one handler every re-driven record belongs to.
 */
export function redriveScope(
  body: RedriveRequest,
  r: RedriveResponse & { readonly touched?: RedriveTouched },
): Record<string, string> {
  // The preview may be masked for the caller; the touched list has every record's handler as read.
  const handlers = new Set(r.touched?.handlers ?? r.preview.map((p) => p.handler));
  const handler =
    body.filter?.handler ?? (handlers.size === 1 && r.matched <= r.preview.length ? [...handlers][0] : undefined);
  return { service: config().SERVICE_NAME, ...(handler ? { handler } : {}) };
}
