import { describe, expect, it } from "vitest";
import type { HandlerKeys } from "@/lib/api/handlers";
import { MemoryLossDetector, lossBetween, parseIdentity } from "./memory-loss";

const DAY = 86_400_000;
/** A handler's count whose keys all have TTLs in one bucket starting at `ttlMinMs`. */
function keys(handler: string, keyCount: number, ttlMinMs = 20 * 3_600_000, errorBound = 0): HandlerKeys {
  return {
    service: "svc",
    handler,
    prefix: `svc:dedup:${handler}`,
    keyCount,
    exact: errorBound === 0,
    errorBound,
    noTtlCount: 0,
    noTtlExact: true,
    ttlSampled: false,
    ttlBuckets: [{ label: "x", minMs: ttlMinMs, maxMs: DAY, count: keyCount, processing: 0 }],
    bytesPerKey: null,
    states: { processing: 0, done: keyCount, marked: 0, other: 0 },
    sampleSize: 0,
    byState: { processing: 0, done: keyCount, marked: 0, other: 0, exact: true },
    leaseShare: 0,
    settledMinTtlMs: null,
    countedAt: new Date(0).toISOString(),
    ttlObserved: null,
    scan: { scanned: 0, total: 0, done: true, mode: "exact", startedAt: null, finishedAt: null },
  } as HandlerKeys;
}

describe("a lost dedup memory is told from keys that expired", () => {
  it("Redis restarted empty: every key of a 24 h window gone within a minute is a loss of 100 %, caused by the restart", () => {
    const d = new MemoryLossDetector();
    d.observeIdentity([{ node: "r:1", runId: "a", uptimeSeconds: 5000 }], 0);
    d.observeCount([keys("h", 31_000), keys("small", 5)], 1_000);
    expect(d.observeIdentity([{ node: "r:1", runId: "b", uptimeSeconds: 3 }], 30_000)).toBe("restart");
    const lost = d.observeCount([], 40_000);
    expect(lost).toEqual([
      expect.objectContaining({ handler: "h", before: 31_000, now: 0, share: 1, cause: "restart" }),
    ]);
    // Held for the alert and the pages; a later count without loss does not clear it.
    d.observeCount([keys("h", 40)], 80_000);
    expect(d.losses(90_000).map((l) => l.handler)).toEqual(["h"]);
    expect(d.losses(40_000 + 30 * 60_000)).toEqual([]);
  });

  it("a count that saw the loss before the identity read is still put down to the restart", () => {
    const d = new MemoryLossDetector();
    d.observeIdentity([{ node: "r:1", runId: "a", uptimeSeconds: 5000 }], 0);
    d.observeCount([keys("h", 400)], 1_000);
    expect(d.observeCount([], 20_000)[0]?.cause).toBe("drop");
    d.observeIdentity([{ node: "r:1", runId: "b", uptimeSeconds: 4 }], 22_000);
    expect(d.losses(23_000)[0]).toMatchObject({ cause: "restart", share: 1 });
  });

  it("a flush without a restart is a 'drop'; another server's run_id with a long uptime is a failover", () => {
    const d = new MemoryLossDetector();
    d.observeIdentity([{ node: "r:1", runId: "a", uptimeSeconds: 100 }], 0);
    d.observeCount([keys("h", 1000)], 0);
    expect(d.observeCount([keys("h", 100)], 60_000)[0]).toMatchObject({ cause: "drop", share: 0.9 });
    d.observeCount([keys("h", 1000)], 65_000);
    expect(d.observeIdentity([{ node: "r:1", runId: "replica", uptimeSeconds: 86_000 }], 70_000)).toBe("failover");
    expect(d.observeCount([keys("h", 0)], 80_000)[0]).toMatchObject({ cause: "failover", share: 1 });
  });

  it("keys whose TTL ran out between two counts, estimates within their bounds, and growth are no loss", () => {
    // Analytics keys with 10-minute TTLs: all could expire within a gap of 11 minutes.
    expect(lossBetween(keys("h", 1000, 0), keys("h", 0), 11 * 60_000)).toBeNull();
    expect(lossBetween(keys("h", 1000, 20 * 3_600_000, 50), keys("h", 920, 20 * 3_600_000, 40), 60_000)).toBeNull();
    expect(lossBetween(keys("h", 1000), keys("h", 5000), 60_000)).toBeNull();
    expect(lossBetween(keys("h", 10), keys("h", 0), 60_000)).toBeNull();
    expect(lossBetween(keys("h", 1000), keys("h", 700), 60_000)).toMatchObject({ share: 0.3, expected: 1000 });
  });

  it("reads run_id and uptime from INFO server", () => {
    expect(parseIdentity("n", "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\nuptime_in_seconds:42\r\n")).toEqual(
      { node: "n", runId: "abc123", uptimeSeconds: 42 },
    );
    expect(parseIdentity("n", "# Server\r\n")).toBeNull();
  });
});

describe("a restarted dashboard goes on from the saved detector state", () => {
  it("a loss held before the restart stays held for its full 30 min, and is not put down as a new baseline", () => {
    const before = new MemoryLossDetector();
    before.observeIdentity([{ node: "r:1", runId: "a", uptimeSeconds: 5000 }], 0);
    before.observeCount([keys("h", 31_000)], 1_000);
    before.observeIdentity([{ node: "r:1", runId: "b", uptimeSeconds: 3 }], 30_000);
    before.observeCount([], 40_000);
    // Saved as JSON in PostgreSQL, read back by the new process.
    const after = new MemoryLossDetector();
    after.restore(JSON.parse(JSON.stringify(before.snapshot())));
    // The consumers refill Redis after the restart: the next counts show no new loss, the held one stays.
    after.observeIdentity([{ node: "r:1", runId: "b", uptimeSeconds: 400 }], 400_000);
    after.observeCount([keys("h", 900)], 410_000);
    expect(after.losses(20 * 60_000).map((l) => [l.handler, l.share, l.cause])).toEqual([["h", 1, "restart"]]);
    expect(after.losses(40_000 + 30 * 60_000)).toEqual([]);
  });

  it("Redis restarted empty while no dashboard ran: the restored baseline shows the loss and its cause", () => {
    const before = new MemoryLossDetector();
    before.observeIdentity([{ node: "r:1", runId: "a", uptimeSeconds: 5000 }], 0);
    before.observeCount([keys("h", 500)], 1_000);
    const fresh = new MemoryLossDetector();
    fresh.observeIdentity([{ node: "r:1", runId: "b", uptimeSeconds: 20 }], 120_000);
    expect(fresh.observeCount([], 125_000)).toEqual([]); // without the baseline: nothing to compare with
    const after = new MemoryLossDetector();
    after.restore(JSON.parse(JSON.stringify(before.snapshot())));
    expect(after.observeIdentity([{ node: "r:1", runId: "b", uptimeSeconds: 20 }], 120_000)).toBe("restart");
    expect(after.observeCount([], 125_000)).toEqual([
      expect.objectContaining({ handler: "h", before: 500, share: 1, cause: "restart" }),
    ]);
  });
});
