import { describe, expect, it } from "vitest";
import type { HandlerKeys, HandlersResponse } from "@/lib/api/handlers";
import { countBehindTraffic, keyFigures } from "./key-figures";

const scan = {
  scanned: 10,
  total: 10,
  done: true,
  mode: "exact" as const,
  startedAt: "2026-12-02T10:00:00.000Z",
  finishedAt: "2026-12-02T10:00:01.000Z",
};
const row = (handler: string, keyCount: number, processing: number): HandlerKeys => ({
  service: "s",
  handler,
  prefix: `s:dedup:${handler}`,
  keyCount,
  exact: true,
  errorBound: 0,
  noTtlCount: 0,
  noTtlExact: true,
  ttlSampled: false,
  ttlBuckets: [],
  bytesPerKey: 100,
  states: { processing, done: keyCount - processing, marked: 0, other: 0 },
  sampleSize: keyCount,
  byState: { processing, done: keyCount - processing, marked: 0, other: 0, exact: true },
  leaseShare: keyCount ? processing / keyCount : null,
  settledMinTtlMs: null,
  countedAt: scan.finishedAt,
  ttlObserved: null,
  scan,
});
const answer = (over: Partial<HandlersResponse> = {}): HandlersResponse => ({
  generatedAt: scan.finishedAt,
  store: { status: "up", detail: "redis" },
  prefixes: ["*:dedup:*"],
  storeKind: "redis",
  scan,
  refresh: { requested: false, started: false, retryAfterMs: 0 },
  handlers: [row("a", 71, 3), row("b", 106, 0)],
  noTtlTotal: 0,
  ...over,
});

describe("keyFigures: a handler's keys as every panel of the page shows them, from the one /api/handlers answer", () => {
  it("takes the handler's row of the last completed count, split into settled keys and leases, with its time", () => {
    expect(keyFigures(answer(), "s", "a")).toMatchObject({
      status: "ok",
      count: 71,
      settled: 68,
      processing: 3,
      countedAt: scan.finishedAt,
      recount: null,
    });
  });

  it("counts 0 for a handler the completed count has no key of, and shows a running recount's progress", () => {
    const running = { ...scan, done: false, scanned: 4, finishedAt: null };
    expect(keyFigures(answer({ scan: running }), "s", "c")).toMatchObject({
      status: "ok",
      count: 0,
      countedAt: scan.finishedAt,
      recount: 0.4,
    });
  });

  it("keeps the last completed count while Redis is down", () => {
    expect(keyFigures(answer({ store: { status: "down", detail: "ECONNREFUSED" } }), "s", "b")).toMatchObject({
      status: "ok",
      count: 106,
    });
  });

  it("is unavailable while nothing was counted (saying why when Redis is down) and without a store to inspect", () => {
    expect(keyFigures(undefined, "s", "a").status).toBe("unavailable");
    expect(keyFigures(answer({ handlers: [], scan: { ...scan, done: false, finishedAt: null } }), "s", "a")).toEqual({
      status: "unavailable",
      detail: "redis: first key count still running",
    });
    const never = { handlers: [], scan: { ...scan, done: false, finishedAt: null } };
    expect(keyFigures(answer({ ...never, store: { status: "down", detail: "ECONNREFUSED" } }), "s", "a")).toEqual({
      status: "unavailable",
      detail: "redis: ECONNREFUSED",
    });
    expect(
      keyFigures(answer({ store: { status: "not-configured", detail: "" }, storeKind: "none" }), "s", "a"),
    ).toMatchObject({ status: "unavailable", detail: expect.stringMatching(/not configured/) });
  });
});

describe("a count taken before the handler's traffic asks for a newer one", () => {
  it("0 keys counted while the handler processes messages is behind its traffic", () => {
    expect(countBehindTraffic(keyFigures(answer(), "s", "c"), 1.74)).toBe(true);
  });
  it("a count with keys, a handler without traffic, a recount already running or no count are not", () => {
    expect(countBehindTraffic(keyFigures(answer(), "s", "a"), 1.74)).toBe(false);
    expect(countBehindTraffic(keyFigures(answer(), "s", "c"), 0)).toBe(false);
    expect(countBehindTraffic(keyFigures(answer(), "s", "c"), null)).toBe(false);
    const running = { ...scan, done: false, scanned: 4, finishedAt: null };
    expect(countBehindTraffic(keyFigures(answer({ scan: running }), "s", "c"), 1.74)).toBe(false);
    expect(countBehindTraffic(keyFigures(undefined, "s", "c"), 1.74)).toBe(false);
  });
});
