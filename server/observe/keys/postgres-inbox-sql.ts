/**
 * The statements the key browser runs on the PostgreSQL inbox table `(service, handler, uuid) →
 * position, fingerprint, state, expires_at` (primary key `(service, handler, uuid)`), and what
 * their rows become. Every read leaves out expired rows (`expires_at <= now()`: a claim takes
 * them over, the cleanup deletes them), so a count is what would keep a copy out now.
 */
import type { HandlerKeys, ScanProgress, TtlBucket } from "@/lib/api/handlers";
import type { KeyEntry } from "@/lib/api/keys";
import type { KeyState } from "@/lib/api/common";
import { BadRequestError } from "../core/errors";
import { splitByState, TTL_BUCKETS } from "./accum";
import { classifyValue, donePosition } from "./samples";
import type { HandlerOwner } from "./source";

/** Most rows one page of the key browser returns. */
export const MAX_INBOX_PAGE = 500;

/** A row's state in the key browser's words ({@link classifyValue}), in SQL. */
const STATE_CLASS = `CASE WHEN state = 'processing' OR state LIKE 'processing:%' THEN 'processing'
  WHEN state = 'done' OR state LIKE 'done:%' OR state LIKE 'done#%' THEN 'done'
  WHEN state = '1' OR state LIKE 'claimed:%' THEN 'marked' ELSE 'other' END`;
/** A row's remaining time to live, ms. */
const TTL_MS = "ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint";
/** The finite upper bounds of the TTL buckets, ms. */
const BOUNDS = TTL_BUCKETS.flatMap((b) => (b.maxMs === null ? [] : [b.maxMs]));

/**
 * The table's handlers `(service, handler)`, at most `$1`: a loose index scan of the primary key
 * (one index probe per handler, whatever its row count), expired rows included.
 */
export const handlersSql = (table: string) => `WITH RECURSIVE h AS (
  (SELECT service, handler FROM ${table} ORDER BY service, handler LIMIT 1)
  UNION ALL
  SELECT n.service, n.handler FROM h, LATERAL (SELECT service, handler FROM ${table}
    WHERE (service, handler) > (h.service, h.handler) ORDER BY service, handler LIMIT 1) n
) SELECT service, handler FROM h LIMIT $1`;

/** One handler's live rows counted, exactly (`$1` service, `$2` handler: the primary key's prefix selects them). */
export const exactCountSql = (table: string) =>
  `SELECT count(*) AS n FROM ${table} WHERE service = $1 AND handler = $2 AND expires_at > now()`;

/**
 * Above this many live rows a handler's states and TTLs are read from a sample of about this many
 * rows — the rows of a random share of the table's pages (`TABLESAMPLE SYSTEM`: only those pages
 * are read) — scaled to the exact count; at or below it, from every row.
 */
export const STATS_SAMPLE_ROWS = 20_000;

/**
 * One handler's live rows (or, `sampled`, those on a random `$3` percent of the table's pages)
 * by state, cumulatively below each TTL bound (all, and leases), and the TTL's min, median, max.
 */
export const statsSql = (table: string, sampled: boolean) => `SELECT count(*) AS n,
  ${(["processing", "done", "marked", "other"] as const).map((s) => `count(*) FILTER (WHERE st = '${s}') AS ${s}`).join(", ")},
  ${BOUNDS.map((b, i) => `count(*) FILTER (WHERE ttl < ${b}) AS c${i}, count(*) FILTER (WHERE ttl < ${b} AND st = 'processing') AS p${i}`).join(",\n  ")},
  min(ttl) AS min_ttl, max(ttl) AS max_ttl, percentile_disc(0.5) WITHIN GROUP (ORDER BY ttl) AS p50_ttl,
  min(ttl) FILTER (WHERE st <> 'processing') AS settled_min
FROM (SELECT ${STATE_CLASS} AS st, ${TTL_MS} AS ttl FROM ${table}${sampled ? " TABLESAMPLE SYSTEM ($3)" : ""}
  WHERE service = $1 AND handler = $2 AND expires_at > now()) r`;

/** The sampling percentage of a handler of `n` live rows, or null to read every row. */
export function statsSamplePercent(n: number): number | null {
  return n > STATS_SAMPLE_ROWS ? Math.min(100, (100 * STATS_SAMPLE_ROWS) / n) : null;
}

const ROW = `uuid, state, position, fingerprint, ${TTL_MS} AS ttl_ms`;

/** One page of a handler's live rows in primary-key order after the cursor's uuid (`$4`): keyset paging, `$3` rows. */
export const pageSql = (table: string, after: boolean) =>
  `SELECT ${ROW} FROM ${table} WHERE service = $1 AND handler = $2 AND expires_at > now()${after ? " AND uuid > $4" : ""}
   ORDER BY uuid LIMIT $3`;

/** The live rows of one uuid (`$3`) under the handlers `($1[i], $2[i])`. */
export const lookupSql = (table: string) =>
  `SELECT service, handler, ${ROW} FROM ${table} WHERE uuid = $3 AND expires_at > now()
   AND (service, handler) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;

/** A key action's rows: those of the uuids `$3` (`byUuid`), else the first `$3` in primary-key order. */
export const actionRowsSql = (table: string, byUuid: boolean) =>
  `SELECT uuid, state, ${TTL_MS} AS ttl_ms FROM ${table} WHERE service = $1 AND handler = $2 AND expires_at > now()
   ${byUuid ? "AND uuid = ANY($3::text[])" : "ORDER BY uuid LIMIT $3"}`;

/** Deletes (`unlink`) or re-expires (`pexpire`, `$5` ms) the rows `($3[i], $4[i])` = (uuid, state read); returns the uuids changed. */
export const actSql = (table: string, op: "unlink" | "pexpire") =>
  op === "unlink"
    ? `DELETE FROM ${table} AS i USING unnest($3::text[], $4::text[]) AS s(uuid, state)
       WHERE i.service = $1 AND i.handler = $2 AND i.uuid = s.uuid AND i.state = s.state RETURNING i.uuid`
    : `UPDATE ${table} AS i SET expires_at = now() + $5::bigint * interval '1 millisecond'
       FROM unnest($3::text[], $4::text[]) AS s(uuid, state)
       WHERE i.service = $1 AND i.handler = $2 AND i.uuid = s.uuid AND i.state = s.state RETURNING i.uuid`;

/** `i.<base64url of the last uuid returned>`: the inbox's cursor, a keyset position, not a scan state. */
export function encodeInboxCursor(uuid: string): string {
  return `i.${Buffer.from(uuid).toString("base64url")}`;
}

/** The uuid a cursor resumes after, or null for the first page. */
export function decodeInboxCursor(cursor: string | undefined): string | null {
  if (!cursor) return null;
  const m = /^i\.([A-Za-z0-9_-]{1,4000})$/.exec(cursor);
  if (!m) throw new BadRequestError("cursor: expected a cursor returned by a previous page of this handler's rows");
  return Buffer.from(m[1]!, "base64url").toString();
}

type Row = Record<string, unknown>;
const num = (v: unknown): number => Number(v ?? 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A row read as the key browser's entry: the key `<prefix>:<uuid>`, its state, expiry, first position and fingerprint. */
export function entryOfRow(prefix: string, r: Row): KeyEntry {
  const state = String(r.state);
  return {
    key: `${prefix}:${String(r.uuid)}`,
    uuid: String(r.uuid),
    state: classifyValue(state),
    ttlMs: Math.max(0, num(r.ttl_ms)),
    bytes: null,
    record: donePosition(state),
    fingerprint: strOrNull(r.fingerprint),
  };
}

/**
 * A page from `want + 1` rows read: `want` of them, and the cursor after the last when the
 * look-ahead row says there is more. A row present the whole time is on exactly one page.
 */
export function pageOf<T extends { uuid: string }>(
  rows: readonly T[],
  want: number,
): { rows: T[]; cursor: string | null } {
  const page = rows.slice(0, want);
  const last = page.at(-1);
  return { rows: page, cursor: rows.length > want && last ? encodeInboxCursor(last.uuid) : null };
}

/**
 * One handler's figures: `n` its exact live row count, `r` its stats row (over every row, or a
 * sample: then states, buckets and lease share are scaled from the sample and say so). Never a row without a TTL.
 */
export function handlerKeysOfCount(owner: HandlerOwner, n: number, r: Row, scan: ScanProgress): HandlerKeys {
  const sampleSize = num(r.n);
  const scale = sampleSize > 0 ? n / sampleSize : 0;
  const states: Record<KeyState, number> = {
    processing: num(r.processing),
    done: num(r.done),
    marked: num(r.marked),
    other: num(r.other),
  };
  const split = splitByState(n, states, sampleSize, true);
  const cum = (i: number, p: string) =>
    i < BOUNDS.length ? num(r[`${p}${i}`]) : p === "c" ? sampleSize : states.processing;
  const part = (i: number, p: string) => Math.round((cum(i, p) - (i === 0 ? 0 : cum(i - 1, p))) * scale);
  const ttlBuckets: TtlBucket[] = TTL_BUCKETS.map((b, i) => ({
    label: b.label,
    minMs: i === 0 ? 0 : (TTL_BUCKETS[i - 1]!.maxMs ?? 0),
    maxMs: b.maxMs,
    count: part(i, "c"),
    processing: part(i, "p"),
  }));
  const min = numOrNull(r.min_ttl);
  return {
    ...owner,
    store: "postgres-inbox",
    keyCount: n,
    exact: true,
    errorBound: 0,
    noTtlCount: 0,
    noTtlExact: true,
    ttlSampled: sampleSize < n,
    ttlBuckets,
    bytesPerKey: null,
    states,
    sampleSize,
    byState: {
      processing: split.processing,
      done: split.done,
      marked: split.marked,
      other: split.other,
      exact: split.exact,
    },
    leaseShare: split.leaseShare,
    settledMinTtlMs: numOrNull(r.settled_min),
    countedAt: scan.finishedAt ?? new Date().toISOString(),
    ttlObserved: min === null ? null : { minMs: min, maxMs: num(r.max_ttl), p50Ms: numOrNull(r.p50_ttl) ?? min },
    scan,
  };
}
