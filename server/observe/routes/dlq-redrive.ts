/**
 * `POST /api/dlq/redrive` sends chosen DLQ records back to the topic they were poisoned on, through
 * the same code as `npm run dlq:replay` (server/transport/dlq-redrive.ts) and the same allow-list
 * (`CONSUMER_TOPICS`).
 */
import type { DlqEntry, RedriveResponse } from "@/lib/api/dlq";
import { MASK_MARKER } from "@/lib/api/masking";
import type { RedriveMode } from "@/names/dlq";
import { config } from "@/server/config";
import { redriveMessage, redrivePacer, redriveTarget, type DlqMessage } from "@/server/transport/dlq-redrive";
import { BadRequestError, UpstreamUnavailableError, errorText } from "../core/errors";
import type { Masker } from "../records/masking";
import { kafkaRead, recordReader } from "../records/records";
import { RECORD_SCAN_LIMITS, scanNewestFirst } from "../records/scan";
import { redrivePublisher } from "../records/redrive-publisher";
import { recordResolutions, topicStates } from "../records/dlq-resolutions";
import { positionKey, type DlqResolutionInput } from "../records/dlq-state";
import { keepRedrivePreview, takeRedrivePreview, type RedrivePreview } from "../records/redrive-previews";
import { byNewest, decodeDlq, REDRIVE_PREVIEW, requireDlqTopic, shownDlqEntry } from "../records/dlq-entries";

/** Most records one re-drive call publishes (the scan bound may stop it earlier: `complete: false`). */
export const MAX_REDRIVE = 1000;

/** What `POST /api/dlq/redrive` takes. */
export interface RedriveRequest {
  topic?: string;
  uuids?: string[];
  filter?: { handler?: string; reason?: string };
  /** Absent: each record's default (`new-uuid` for a payload conflict). */
  mode?: RedriveMode;
  /** The dry run a real re-drive of a filter is bound to (../records/redrive-previews). */
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

/** A DLQ record chosen for a re-drive: its message, its entry as read and as the caller sees it, and where it goes. */
interface Chosen {
  msg: DlqMessage;
  entry: DlqEntry;
  shown: DlqEntry;
  target: { mode: RedriveMode; uuid: string };
}

/** What the scan chose, and what it left out and why. */
interface Choice {
  chosen: Chosen[];
  skipped: number;
  skippedPreview: RedriveResponse["skippedPreview"];
  notOpen: number;
  complete: boolean;
}

/**
 * Scans `topic` newest first within the scan bound for the records `body` names (UUIDs, or the
 * filter, within its dry run's positions when `bound`), one per UUID, at most {@link MAX_REDRIVE}.
 */
async function chooseRecords(
  body: RedriveRequest,
  topic: string,
  allow: ReadonlySet<string>,
  bound: RedrivePreview | null,
  mask: Masker,
): Promise<Choice> {
  const wanted = body.uuids ? new Set(body.uuids) : null;
  const seen = new Set<string>();
  const chosen: Chosen[] = [];
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
  const complete = r.complete || (wanted !== null && seen.size >= wanted.size);
  return { chosen, skipped, skippedPreview, notOpen, complete };
}

/**
 * Publishes `chosen` in order at `rate` per second; each published record becomes `redriven` by
 * `who`, kept even when a later publish fails (then 503 naming how many went out).
 */
async function publishChosen(
  topic: string,
  chosen: readonly Chosen[],
  allow: ReadonlySet<string>,
  opts: { mode?: RedriveMode; who: string; rate: number },
): Promise<{ redriven: number; destinationOffsets: string[] }> {
  let redriven = 0;
  const resolved: DlqResolutionInput[] = [];
  const destinationOffsets: string[] = [];
  const publisher = redrivePublisher();
  const pacer = redrivePacer(opts.rate);
  try {
    for (const c of chosen) {
      try {
        await pacer.wait();
        const to = await redriveMessage(publisher, c.msg, allow, { mode: opts.mode });
        destinationOffsets.push(`${to.topic}/${to.partition ?? "?"}/${to.offset ?? "?"}`);
        resolved.push({
          partition: c.entry.partition,
          offset: c.entry.offset,
          state: "redriven",
          who: opts.who,
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
  return { redriven, destinationOffsets };
}

/** The re-drive's preview: the first chosen records as the caller may see them. */
function previewOf(chosen: readonly Chosen[]): RedriveResponse["preview"] {
  // A masked UUID stays masked where it is sent as is (same-uuid); a UUID derived from the position is not the record's.
  return chosen.slice(0, REDRIVE_PREVIEW).map(({ entry, shown: e, target: t }) => ({
    uuid: e.uuid ?? MASK_MARKER,
    topic: e.topicPoisoned,
    handler: e.handler,
    reasonClass: e.reasonClass,
    offset: e.offset,
    partition: e.partition,
    mode: t.mode,
    sendUuid: t.uuid === entry.uuid ? (e.uuid ?? MASK_MARKER) : t.uuid,
  }));
}

/**
 * Builds `POST /api/dlq/redrive`: the DLQ records matching the UUIDs (or the filter), newest
 * first and one per UUID, within the scan bound; a dry run publishes nothing. A filter leaves
 * records already re-driven or discarded alone (`notOpen`); UUIDs named explicitly are re-driven
 * whatever their state. Each published record becomes `redriven` by `who` (../records/dlq-state). The
 * records are chosen and sent whole; the previews show them as `mask` lets the caller see them.
 */
export async function redriveDlq(
  body: RedriveRequest,
  who: string,
  mask: Masker,
): Promise<RedriveResponse & { topic: string; readonly touched?: RedriveTouched }> {
  const topic = requireDlqTopic(body.topic);
  const allow = new Set(config().CONSUMER_TOPICS);
  const bound = boundPreview(body, topic);
  const { chosen, skipped, skippedPreview, notOpen, complete } = await chooseRecords(body, topic, allow, bound, mask);
  const rate = config().DLQ_REDRIVE_RATE;
  const { redriven, destinationOffsets } = body.dryRun
    ? { redriven: 0, destinationOffsets: [] }
    : await publishChosen(topic, chosen, allow, { mode: body.mode, who, rate });
  const previewId =
    body.dryRun && !body.uuids
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
    preview: previewOf(chosen),
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
