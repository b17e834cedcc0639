import { describe, expect, it } from "vitest";
import { latencyVerdict, type RuntimePart } from "@/lib/latency-split";
import { behindText, checkQuantileText, latencyPartsText, processedHint, topReasonText } from "./stats";

describe("the check p99 tile tells the consumer from Redis", () => {
  const loop = (seconds: number): RuntimePart => ({
    status: "ok",
    runtime: "node",
    metric: "nodejs_eventloop_lag_p99_seconds",
    meaning: "event loop p99",
    seconds,
  });
  const parts = (p99: number, runtime: RuntimePart, usec: number | null, high: boolean) =>
    latencyPartsText({ runtime, redisUsecPerCall: usec, ...latencyVerdict(p99, runtime, usec, high) });
  it("a loaded event loop with a fast Redis above the threshold reads 'the consumer is saturated (not Redis)'", () => {
    expect(parts(0.079, loop(0.08), 6, true)).toBe(
      "event loop p99 80 ms · Redis 6 µs/call · the consumer is saturated (not Redis)",
    );
  });
  it("a slow Redis dominating a high p99 reads 'Redis is slow'", () => {
    expect(parts(0.12, loop(0.011), 90_000, true)).toContain("Redis is slow");
  });
  it("below the threshold it says which part explains the p99", () => {
    expect(parts(0.012, loop(0.011), 5, false)).toContain("mostly the consumer");
  });
  it("embedded mode (no Redis figure) never names Redis", () => {
    const t = parts(0.045, loop(0.04), null, false);
    expect(t).toContain("event loop p99");
    expect(t).not.toMatch(/redis/i);
  });
});

describe("the error tile names its top reason and what it means", () => {
  it("names the top reason with its share of the errors: a bad record reads as a publisher bug, not Redis", () => {
    expect(topReasonText({ marshal: 0.02, redis_conn: 0, redis_timeout: 0 })).toBe(
      "mostly marshal, 100% of errors (publisher bug: records without a usable UUID, sent to the DLQ)",
    );
    expect(topReasonText({ marshal: 0, redis_conn: 3, redis_timeout: 0.1 })).toBe(
      "mostly redis_conn, 96.8% of errors (Redis unreachable)",
    );
    expect(topReasonText({ marshal: 0, redis_conn: 0 })).toBeNull();
  });
});

describe("the check p99 tile says which bucket its figure lies in", () => {
  it("100 ms added per check reads as the 100–250 ms bucket beside the interpolated 248.5 ms", () => {
    expect(checkQuantileText(0.2485)).toBe("248.5 ms (bucket 100–250 ms)");
  });
  it("a healthy check names its millisecond bucket", () => {
    expect(checkQuantileText(0.0042)).toBe("4.2 ms (bucket 2.5–5 ms)");
  });
});

describe("the Processed tile's failed deliveries are not worded as the errors tile's dedup errors", () => {
  it("says messages failed (to the DLQ or redelivered), never 'errors', beside a Dedup errors tile", () => {
    const t = processedHint({ deduplicated: 0.52, error: 0 });
    expect(t).toBe("0.52 msg/s deduplicated, 0 msg/s failed (to the DLQ or redelivered)");
    expect(t).not.toMatch(/errors/);
  });
});

describe("a key count behind its traffic says how far, while it is recounted", () => {
  it("names the messages processed since the count", () => {
    expect(behindText(1_240)).toBe("≈ 1,240 messages since this count, recounting");
    expect(behindText(1)).toBe("≈ 1 message since this count, recounting");
  });
});
