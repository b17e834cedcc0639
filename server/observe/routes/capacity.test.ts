import { describe, expect, it } from "vitest";
import { WINDOW_FULL, windowFill } from "./capacity";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const now = Date.parse("2026-12-01T18:00:00Z");

describe("capacity is warm-up aware", () => {
  it("four minutes after start a 24 h window is 0.3 % filled, valid once the first keys expire", () => {
    // The oldest key was written 4 min ago: 24 h − 4 min left.
    const w = windowFill({ ttlMs: DAY, settledMinTtlMs: DAY - 4 * MIN, maxTtlMs: DAY, processAgeMs: null, now })!;
    expect(w.source).toBe("oldest-key");
    expect(w.ageMs).toBe(4 * MIN);
    expect(w.filled).toBeCloseTo(4 / 1440, 6);
    expect(w.validAt).toBe(new Date(now + DAY - 4 * MIN).toISOString());
  });
  it("a full window (keys expiring all the time) has a tiny smallest TTL: filled, no valid-after", () => {
    const w = windowFill({ ttlMs: DAY, settledMinTtlMs: 90_000, maxTtlMs: DAY, processAgeMs: null, now })!;
    expect(w.filled).toBeGreaterThanOrEqual(WINDOW_FULL);
    expect(w.validAt).toBeNull();
  });
  it("a TTL shorter than declared still reads as full, so its warning is not hidden", () => {
    // Declared 24 h, written 1 h: the oldest key has < 1 h left.
    const w = windowFill({ ttlMs: DAY, settledMinTtlMs: 20 * MIN, maxTtlMs: 60 * MIN, processAgeMs: null, now })!;
    expect(w.filled).toBeGreaterThanOrEqual(WINDOW_FULL);
  });
  it("keys that outlive the declared window give no age (the gap note must speak)", () => {
    expect(windowFill({ ttlMs: DAY, settledMinTtlMs: 2 * DAY, maxTtlMs: 7 * DAY, processAgeMs: null, now })).toBeNull();
  });
  it("without Redis (in-process store) the process start is the keys' age", () => {
    const w = windowFill({ ttlMs: 60 * MIN, settledMinTtlMs: null, maxTtlMs: null, processAgeMs: 6 * MIN, now })!;
    expect(w.source).toBe("process-start");
    expect(w.filled).toBeCloseTo(0.1, 6);
    expect(
      windowFill({ ttlMs: 60 * MIN, settledMinTtlMs: null, maxTtlMs: null, processAgeMs: 2 * 60 * MIN, now })!.filled,
    ).toBe(1);
  });
  it("unknown age: no window", () => {
    expect(windowFill({ ttlMs: DAY, settledMinTtlMs: null, maxTtlMs: null, processAgeMs: null, now })).toBeNull();
  });
});
