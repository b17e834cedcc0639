/**
 * `POST /api/dlq/discard`: an engineer decides that DLQ records need no re-drive (a test message,
 * an event superseded since, a fix applied by hand) and says why. The records stay in the DLQ
 * topic (Kafka cannot delete one record); they become `discarded` (../records/dlq-state) and leave the
 * backlog and the DLQ page's default view. Only open records are discarded: one already re-driven
 * or discarded is counted in `notOpen` and left as it is.
 */
import type { DiscardBody, DiscardResponse } from "@/lib/api/dlq";
import { config } from "@/server/config";
import { decodeDlq, requireDlqTopic, REDRIVE_PREVIEW, shownDlqEntry } from "../records/dlq-entries";
import { recordResolutions, topicStates, type TopicStates } from "../records/dlq-resolutions";
import type { RawRecord } from "../records/log-reader";
import type { Masker } from "../records/masking";
import { kafkaRead, recordReader } from "../records/records";
import { RECORD_SCAN_LIMITS, scanNewestFirst } from "../records/scan";

/** What a discard found: the answer, and every position it acted on (for the audit trail, not the answer). */
export type DiscardResult = DiscardResponse & {
  readonly positions: readonly string[];
  readonly uuids: readonly string[];
};

/** The records at the named positions (one fetch each: a position outside the log finds nothing). */
async function atPositions(
  topic: string,
  positions: NonNullable<DiscardBody["positions"]>,
): Promise<{ found: RawRecord[]; notFound: number }> {
  const found: RawRecord[] = [];
  let notFound = 0;
  for (const p of positions) {
    const got = await recordReader()
      .fetchFrom(topic, p.partition, BigInt(p.offset), 64 * 1024)
      .catch(() => []);
    const r = got[0];
    if (r && r.offset === BigInt(p.offset)) found.push(r);
    else notFound++;
  }
  return { found, notFound };
}

/** Every copy of the named UUIDs within the scan bound, newest first. */
async function withUuids(topic: string, uuids: readonly string[]): Promise<{ found: RawRecord[]; complete: boolean }> {
  const wanted = new Set(uuids);
  const allow = new Set(config().CONSUMER_TOPICS);
  const found: RawRecord[] = [];
  const r = await scanNewestFirst(recordReader(), topic, null, RECORD_SCAN_LIMITS, (rec) => {
    const uuid = decodeDlq(rec, allow).entry.uuid;
    if (uuid && wanted.has(uuid)) found.push(rec);
  });
  return { found, complete: r.complete };
}

/**
 * Builds `POST /api/dlq/discard`: finds the named records, keeps the open ones and, unless a dry run, marks them `discarded` by
 * `who`; the preview shows them as `mask` lets the caller see them.
 */
export async function discardDlq(body: DiscardBody, who: string, mask: Masker): Promise<DiscardResult> {
  const topic = requireDlqTopic(body.topic);
  const allow = new Set(config().CONSUMER_TOPICS);
  const states: TopicStates = await kafkaRead(topic, () => topicStates(topic));
  let notFound = 0;
  let complete = true;
  let records: RawRecord[];
  if (body.positions) {
    const unique = [...new Map(body.positions.map((p) => [`${p.partition}:${p.offset}`, p])).values()];
    ({ found: records, notFound } = await kafkaRead(topic, () => atPositions(topic, unique)));
  } else {
    ({ found: records, complete } = await kafkaRead(topic, () => withUuids(topic, body.uuids!)));
    const seen = new Set(records.map((r) => decodeDlq(r, allow).entry.uuid));
    notFound = body.uuids!.filter((u) => !seen.has(u)).length;
  }
  const open = records.filter((r) => states.of(r).state === "open");
  const entries = open.map((r) => decodeDlq(r, allow).entry);
  if (!body.dryRun)
    await recordResolutions(
      topic,
      entries.map((e) => ({
        partition: e.partition,
        offset: e.offset,
        state: "discarded" as const,
        who,
        why: body.why,
      })),
    );
  const answer: DiscardResponse = {
    topic,
    dryRun: body.dryRun,
    matched: entries.length,
    discarded: body.dryRun ? 0 : entries.length,
    notOpen: records.length - open.length,
    notFound,
    complete,
    preview: open
      .slice(0, REDRIVE_PREVIEW)
      .map((r, i) => shownDlqEntry(r, entries[i]!, allow, mask))
      .map((e) => ({
        topic: e.topic,
        partition: e.partition,
        offset: e.offset,
        uuid: e.uuid,
        handler: e.handler,
        reasonClass: e.reasonClass,
      })),
  };
  // Kept for the audit trail, left out of the JSON answer (not enumerable): the preview stays bounded.
  return Object.defineProperties(answer, {
    positions: { value: entries.map((e) => `${topic}/${e.partition}/${e.offset}`), enumerable: false },
    uuids: { value: [...new Set(entries.flatMap((e) => (e.uuid ? [e.uuid] : [])))], enumerable: false },
  }) as DiscardResult;
}
