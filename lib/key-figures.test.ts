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

describe("a count taken before most of the handler's traffic asks for a newer one", () => {
  const at = Date.parse(scan.finishedAt!);
  it("3 keys counted, then 20 s at 0.5 msg/s: about 10 messages since, behind", () => {
    expect(
      countBehindTraffic({ ...keyFigures(answer({ handlers: [row("a", 3, 0)] }), "s", "a") }, 0.5, at + 20_000),
    ).toBe(10);
  });
  it("0 keys counted while the handler processes messages is behind", () => {
    expect(countBehindTraffic(keyFigures(answer(), "s", "c"), 1.74, at + 15_000)).toBe(26);
  });
  it("a steady count (a minute of traffic is a small share of it) is not", () => {
    expect(
      countBehindTraffic(keyFigures(answer({ handlers: [row("a", 150_000, 0)] }), "s", "a"), 1.74, at + 60_000),
    ).toBeNull();
  });
  it("nor a count younger than 10 s, a handler without traffic, a running recount or no count", () => {
    const c = keyFigures(answer(), "s", "c");
    expect(countBehindTraffic(c, 1.74, at + 5_000)).toBeNull();
    expect(countBehindTraffic(c, 0, at + 60_000)).toBeNull();
    expect(countBehindTraffic(c, null, at + 60_000)).toBeNull();
    const running = { ...scan, done: false, scanned: 4, finishedAt: null };
    expect(countBehindTraffic(keyFigures(answer({ scan: running }), "s", "c"), 1.74, at + 60_000)).toBeNull();
    expect(countBehindTraffic(keyFigures(undefined, "s", "c"), 1.74, at + 60_000)).toBeNull();
  });
});
