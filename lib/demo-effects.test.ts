import { describe, expect, it } from "vitest";
import type { DemoEffects } from "@/lib/api/demo";
import { effectsSince } from "./demo-effects";

const zero = {
  processed: 0,
  deduplicated: 0,
  handlerErrors: 0,
  released: 0,
  poisoned: 0,
  dedupErrors: 0,
  sideEffects: 0,
  duplicateSideEffects: 0,
};
const answer = (
  at: string,
  counts: Partial<DemoEffects["counts"]>,
  buckets: Array<[number | null, number]>,
): DemoEffects => ({
  mode: "embedded",
  running: true,
  service: "notification",
  at,
  counts: { ...zero, ...counts },
  checkBuckets: buckets.map(([le, count]) => ({ le, count })),
});

describe("the live demo's figures since a marker", () => {
  it("a demo after a polluted window starts from the marker: 63 swallowed copies and slow checks before it, none after", () => {
    const polluted = answer("2026-12-07T10:00:00Z", { processed: 1000, deduplicated: 63, dedupErrors: 28 }, [
      [0.005, 900],
      [0.25, 1000],
      [null, 1000],
    ]);
    const later = answer("2026-12-07T10:00:15Z", { processed: 1075, deduplicated: 63, dedupErrors: 28 }, [
      [0.005, 975],
      [0.25, 1075],
      [null, 1075],
    ]);
    const s = effectsSince(polluted, later);
    expect(s.seconds).toBe(15);
    expect(s.counts.processed).toBe(75);
    expect(s.duplicateRatio).toBe(0);
    expect(s.counts.dedupErrors).toBe(0);
    // Every check since the marker was under 5 ms, though the whole window's p99 sits in the 5–250 ms bucket.
    expect(s.p99Bucket).toEqual({ low: 0, high: 5 });
    expect(s.checks).toBe(75);
  });

  it("retries since the marker: failed attempts and released keys; no check yet is no p99 (not 0 ms)", () => {
    const mark = answer("2026-12-07T10:00:00Z", { handlerErrors: 4, released: 4 }, [[null, 10]]);
    const s = effectsSince(mark, answer("2026-12-07T10:00:10Z", { handlerErrors: 19, released: 19 }, [[null, 10]]));
    expect(s.counts.handlerErrors).toBe(15);
    expect(s.counts.released).toBe(15);
    expect(s.p99Bucket).toBeNull();
    expect(s.duplicateRatio).toBeNull();
  });

  it("a total that went down (the process restarted) counts from zero instead of going negative", () => {
    const s = effectsSince(
      answer("2026-12-07T10:00:00Z", { processed: 500 }, []),
      answer("2026-12-07T10:00:05Z", { processed: 20 }, []),
    );
    expect(s.counts.processed).toBe(20);
  });
});
