import { describe, expect, it } from "vitest";
import { TTL_BUCKETS } from "./accum";
import {
  actSql,
  decodeInboxCursor,
  encodeInboxCursor,
  entryOfRow,
  handlerKeysOfCount,
  pageOf,
  pageSql,
  STATS_SAMPLE_ROWS,
  statsSamplePercent,
} from "./postgres-inbox-sql";

const owner = { service: "billing", handler: "on-paid", prefix: "billing:dedup:on-paid" };
const scan = {
  scanned: 1,
  total: 1,
  done: true,
  mode: "exact" as const,
  startedAt: null,
  finishedAt: "2026-12-07T22:00:00.000Z",
};

describe("paging the inbox's rows by their primary key", () => {
  it("returns the asked number of rows and a cursor only when the look-ahead row says there is more", () => {
    const rows = ["a", "b", "c"].map((uuid) => ({ uuid }));
    expect(pageOf(rows, 2)).toEqual({ rows: rows.slice(0, 2), cursor: encodeInboxCursor("b") });
    expect(pageOf(rows, 3)).toEqual({ rows, cursor: null });
    expect(pageOf([], 5)).toEqual({ rows: [], cursor: null });
  });

  it("resumes after the last uuid returned, whatever characters it holds", () => {
    for (const uuid of ["01JEXAMPLE", "ünïcode/with:colons", "x".repeat(300)])
      expect(decodeInboxCursor(encodeInboxCursor(uuid))).toBe(uuid);
    expect(decodeInboxCursor(undefined)).toBeNull();
  });

  it("refuses another source's cursor (a Redis SCAN cursor, an in-memory one) with a 400, not a first page", () => {
    for (const c of ["0", "17:0|3", "m.YWJj"]) expect(() => decodeInboxCursor(c)).toThrow(/cursor/);
  });

  it("reads a page after the cursor with a keyset condition on uuid, in uuid order, and live rows only", () => {
    const first = pageSql('"public"."dedup_inbox"', false);
    const next = pageSql('"public"."dedup_inbox"', true);
    expect(first).not.toMatch(/uuid > \$4/);
    expect(next).toMatch(/service = \$1 AND handler = \$2 AND expires_at > now\(\) AND uuid > \$4/);
    expect(next).toMatch(/ORDER BY uuid LIMIT \$3/);
  });

  it("changes a row only while it holds the state the dry run read", () => {
    for (const op of ["unlink", "pexpire"] as const) expect(actSql("t", op)).toMatch(/i\.state = s\.state/);
  });
});

describe("an inbox row as the key browser shows it", () => {
  it("is the key <service>:dedup:<handler>:<uuid> with its state, first record, fingerprint and time left", () => {
    const e = entryOfRow(owner.prefix, {
      uuid: "01JF",
      state: "done:orders:3:1018#ab12",
      position: "orders:3:1018",
      fingerprint: "ab12",
      ttl_ms: "86399000",
    });
    expect(e).toEqual({
      key: "billing:dedup:on-paid:01JF",
      uuid: "01JF",
      state: "done",
      ttlMs: 86_399_000,
      bytes: null,
      record: { topic: "orders", partition: 3, offset: "1018" },
      fingerprint: "ab12",
    });
  });
});

describe("a handler's count row as its figures", () => {
  it("splits the cumulative TTL counts into buckets that add up to the count, leases apart", () => {
    const finite = TTL_BUCKETS.length - 1;
    // 10 rows: 2 under the first bound (1 a lease), 7 more under the 24 h bound, 1 beyond every bound.
    const row: Record<string, unknown> = { n: "10", processing: "1", done: "9", marked: "0", other: "0" };
    for (let i = 0; i < finite; i++) {
      row[`c${i}`] = i === 0 ? "2" : i < 3 ? "2" : "9";
      row[`p${i}`] = "1";
    }
    Object.assign(row, { min_ttl: "1000", max_ttl: "700000000", p50_ttl: "80000000", settled_min: "5000" });
    const h = handlerKeysOfCount(owner, 10, row, scan);
    expect(h.keyCount).toBe(10);
    expect(h.store).toBe("postgres-inbox");
    expect(h.exact).toBe(true);
    expect(h.ttlBuckets.reduce((a, b) => a + b.count, 0)).toBe(10);
    expect(h.ttlBuckets.map((b) => b.count)).toEqual([2, 0, 0, 7, 0, 0, 1]);
    expect(h.ttlBuckets.reduce((a, b) => a + b.processing, 0)).toBe(1);
    expect(h.byState).toMatchObject({ processing: 1, done: 9, exact: true });
    expect(h.leaseShare).toBeCloseTo(0.1);
    expect(h.ttlObserved).toEqual({ minMs: 1000, maxMs: 700_000_000, p50Ms: 80_000_000 });
    expect(h.countedAt).toBe(scan.finishedAt);
    expect(h.ttlSampled).toBe(false);
  });

  it("keeps a big handler's count exact and scales its sampled states and buckets to it, saying they are sampled", () => {
    expect(statsSamplePercent(STATS_SAMPLE_ROWS)).toBeNull();
    expect(statsSamplePercent(STATS_SAMPLE_ROWS * 50)).toBeCloseTo(2);
    const row: Record<string, unknown> = { n: "2000", processing: "20", done: "1980", marked: "0", other: "0" };
    for (let i = 0; i < TTL_BUCKETS.length - 1; i++) Object.assign(row, { [`c${i}`]: "1000", [`p${i}`]: "20" });
    const h = handlerKeysOfCount(owner, 1_000_000, row, scan);
    expect(h.keyCount).toBe(1_000_000);
    expect(h.sampleSize).toBe(2000);
    expect(h.ttlSampled).toBe(true);
    expect(h.byState).toMatchObject({ processing: 10_000, done: 990_000, exact: false });
    expect(h.ttlBuckets.map((b) => b.count)).toEqual([500_000, 0, 0, 0, 0, 0, 500_000]);
    expect(h.ttlBuckets[0]!.processing).toBe(10_000);
  });

  it("says no TTL was observed for a declared handler with no live row, rather than a 0 ms TTL", () => {
    const h = handlerKeysOfCount(owner, 0, { n: "0", min_ttl: null }, scan);
    expect(h.keyCount).toBe(0);
    expect(h.ttlObserved).toBeNull();
    expect(h.settledMinTtlMs).toBeNull();
  });
});
