/**
 * The DLQ browser: `GET /api/dlq` pages a DLQ topic newest first (bounded like every record scan)
 * with each record's poison metadata and its reason class. The re-drive is `./dlq-redrive.ts`, the
 * discard `./dlq-discard.ts`.
 */
import type { DlqEntry, DlqResponse } from "@/lib/api/dlq";
import { config } from "@/server/config";
import { isTopicMissing } from "../records/log-reader";
import type { Masker } from "../records/masking";
import { kafkaRead, recordReader } from "../records/records";
import {
  RECORD_SCAN_LIMITS,
  decodeScanCursor,
  encodeScanCursor,
  scanNewestFirst,
  type ScanResult,
} from "../records/scan";
import { entryState, stateMatches, topicStates } from "../records/dlq-resolutions";
import { byNewest, decodeDlq, requireDlqTopic, shownDlqEntry } from "../records/dlq-entries";

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
