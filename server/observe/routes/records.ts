import type { RecordsResponse } from "@/lib/api/records";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import type { RawRecord } from "../records/log-reader";
import { hidesHeader, type Masker } from "../records/masking";
import { kafkaRead, maskedRecordView, oneRecord, recordReader, requireAllowedTopic, uuidOf } from "../records/records";
import { RECORD_SCAN_LIMITS, scanNewestFirst } from "../records/scan";

/** Most records one UUID search returns (newest first). */
export const MAX_UUID_MATCHES = 20;

/**
 * Builds `GET /api/records`: by position, or by UUID (bounded, newest first), each record as `mask`
 * lets the caller see it. **A UUID header the caller sees masked never matches**: the search
 * must not tell a masked value by trying it.
 */
export async function getRecords(
  q: { topic: string; partition?: number; offset?: string; uuid?: string },
  mask: Masker,
): Promise<RecordsResponse> {
  requireAllowedTopic(q.topic);
  const reader = recordReader();
  const generatedAt = new Date().toISOString();
  if (q.uuid === undefined) {
    const record = await kafkaRead(q.topic, () => oneRecord(reader, q.topic, q.partition!, BigInt(q.offset!), mask));
    return { kind: "record", generatedAt, record };
  }
  const uuid = q.uuid;
  const found: RawRecord[] = [];
  const r = await kafkaRead(q.topic, () =>
    scanNewestFirst(
      reader,
      q.topic,
      null,
      RECORD_SCAN_LIMITS,
      (rec) => {
        if (found.length >= MAX_UUID_MATCHES || uuidOf(rec) !== uuid) return;
        if (!hidesHeader(mask(rec), WATERMILL_UUID_HEADER)) found.push(rec);
      },
      () => found.length >= MAX_UUID_MATCHES,
    ),
  );
  const records = found
    .sort((a, b) => b.timestamp - a.timestamp || Number(b.offset - a.offset))
    .map((rec) => maskedRecordView(rec, mask));
  return {
    kind: "search",
    generatedAt,
    topic: q.topic,
    uuid,
    records,
    scanned: r.scanned,
    limits: { ...RECORD_SCAN_LIMITS, matches: MAX_UUID_MATCHES },
    complete: r.complete,
  };
}
