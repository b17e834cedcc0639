/**
 * A bounded scan of a topic from its newest records backwards, window by window on every
 * partition, without a consumer group ({@link LogReader}: Kafka's log or the embedded broker's).
 * One request reads at most {@link ScanBounds} — records, fetched bytes, wall time — and says
 * whether it reached the start of every partition; a cursor (`partition:end,…`) resumes where it
 * stopped.
 */
import type { ScanBounds } from "@/lib/api/records";
import { BadRequestError } from "../core/errors";
import type { LogReader, RawRecord } from "./log-reader";

/** Bounds of one `GET /api/records?uuid=` or `GET /api/dlq` request (docs/UI.md "Records"). */
export const RECORD_SCAN_LIMITS: ScanBounds = { records: 20_000, bytes: 32 * 1024 * 1024, ms: 4000 };

/** Records per partition read in one window (the newest not yet read). */
export const SCAN_WINDOW_RECORDS = 500;

/** Most bytes one Fetch asks for. */
export const FETCH_MAX_BYTES = 1024 * 1024;

/** What a scan did. */
export interface ScanResult {
  scanned: ScanBounds;
  /** Every partition was read back to its log start. */
  complete: boolean;
  /** Per partition, the first offset NOT yet read (exclusive end of what is left); only partitions with records left. */
  left: Map<number, bigint>;
}

/** Bytes of a record's key, value and headers. */
export function recordSize(r: RawRecord): number {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0);
  for (const [k, v] of Object.entries(r.headers)) {
    for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v])
      n += Buffer.byteLength(k) + (typeof x === "string" ? Buffer.byteLength(x) : x.length);
  }
  return n;
}

/** `"0:120,3:7"` → partition → exclusive end. A 400 for a malformed cursor. */
export function decodeScanCursor(cursor: string | undefined): Map<number, bigint> | null {
  if (!cursor) return null;
  const out = new Map<number, bigint>();
  for (const part of cursor.split(",")) {
    const m = /^(\d{1,7}):(\d{1,19})$/.exec(part);
    if (!m) throw new BadRequestError("cursor: expected a cursor returned by a previous page");
    out.set(Number(m[1]), BigInt(m[2]!));
  }
  return out;
}

/** The cursor of what is left, `null` when nothing is. */
export function encodeScanCursor(left: ReadonlyMap<number, bigint>): string | null {
  return left.size === 0
    ? null
    : [...left]
        .sort((a, b) => a[0] - b[0])
        .map(([p, e]) => `${p}:${e}`)
        .join(",");
}

/** One window's records read forward from `start` up to `end` (exclusive), stopping at `budget` bytes or the deadline. */
async function readWindow(
  reader: LogReader,
  topic: string,
  partition: number,
  start: bigint,
  end: bigint,
  budget: number,
  deadline: number,
): Promise<{ records: RawRecord[]; bytes: number; cut: boolean }> {
  const records: RawRecord[] = [];
  let bytes = 0;
  let at = start;
  while (at < end) {
    if (Date.now() >= deadline || bytes >= budget) return { records, bytes, cut: true };
    const got = await reader.fetchFrom(topic, partition, at, Math.max(1, Math.min(FETCH_MAX_BYTES, budget - bytes)));
    const mine = got.filter((r) => r.offset < end);
    for (const r of mine) bytes += recordSize(r);
    records.push(...mine);
    // Nothing at or after `at` below the end (a compacted or aborted range): the window is done.
    const last = got.at(-1);
    if (mine.length === 0 || !last) break;
    at = last.offset + 1n;
  }
  return { records, bytes, cut: false };
}

/**
 * Reads `topic` newest first. Each round reads one window ({@link SCAN_WINDOW_RECORDS}) per
 * partition and hands its records to `visit`, newest first; a window cut by a bound is not visited
 * (it is read again on resume). **A scan always makes progress**: when the first window of a call
 * is cut by the bytes bound (records so large that 500 of them exceed it), it is read again with
 * half as many records until the newest part fits (or one record is left), so the bytes read may
 * reach twice the bound once, and a page of huge records moves the cursor instead of blinding the
 * scan. Stops when `enough()` says so after a round, at a bound, or at the start of every
 * partition. `from` (a decoded cursor) limits each partition's end; partitions it does not name
 * are done.
 */
export async function scanNewestFirst(
  reader: LogReader,
  topic: string,
  from: ReadonlyMap<number, bigint> | null,
  limits: ScanBounds,
  visit: (r: RawRecord) => void,
  enough: () => boolean = () => false,
): Promise<ScanResult> {
  const started = Date.now();
  const deadline = started + limits.ms;
  const scanned: ScanBounds = { records: 0, bytes: 0, ms: 0 };
  const state = new Map<number, { low: bigint; end: bigint }>();
  for (const r of await reader.ranges(topic)) {
    const end = from ? (from.get(r.partition) ?? r.low) : r.high;
    state.set(r.partition, { low: r.low, end: end > r.high ? r.high : end });
  }
  let bounded = false;
  const open = () => [...state].filter(([, s]) => s.end > s.low);
  while (!bounded && open().length > 0) {
    for (const [partition, s] of open()) {
      let want = Math.min(SCAN_WINDOW_RECORDS, limits.records - scanned.records);
      if (want <= 0 || Date.now() >= deadline || scanned.bytes >= limits.bytes) {
        bounded = true;
        break;
      }
      let start: bigint;
      let w: Awaited<ReturnType<typeof readWindow>>;
      let retried = 0; // bytes the shrunk re-reads took: together at most one more bound
      for (let attempt = 0; ; attempt++) {
        start = s.end - BigInt(want) > s.low ? s.end - BigInt(want) : s.low;
        w = await readWindow(
          reader,
          topic,
          partition,
          start,
          s.end,
          attempt === 0 ? limits.bytes - scanned.bytes : limits.bytes - retried,
          deadline,
        );
        scanned.bytes += w.bytes;
        if (attempt > 0) retried += w.bytes;
        // Cut with nothing visited yet in this call: shrink the window rather than answer nothing.
        if (!w.cut || scanned.records > 0 || w.records.length <= 1 || Date.now() >= deadline || retried >= limits.bytes)
          break;
        want = Math.max(1, Math.floor(w.records.length / 2));
      }
      if (w.cut) {
        bounded = true;
        break;
      }
      scanned.records += w.records.length;
      for (let i = w.records.length - 1; i >= 0; i--) visit(w.records[i]!);
      s.end = start;
    }
    if (enough()) break;
  }
  scanned.ms = Date.now() - started;
  const left = new Map(open().map(([p, s]) => [p, s.end] as const));
  return { scanned, complete: left.size === 0, left };
}
