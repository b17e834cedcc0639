import { describe, expect, it } from "vitest";
import { latencyPartsText, topReasonText } from "./stats";

describe("the check p99 tile tells the consumer from Redis", () => {
  it("a loaded event loop with a fast Redis above the threshold reads 'the consumer is saturated'", () => {
    expect(latencyPartsText({ eventLoopP99Seconds: 0.08, redisUsecPerCall: 6, dominant: "consumer" }, 0.079)).toBe("event loop p99 80 ms · Redis 6 µs/call · the consumer is saturated");
  });
  it("a slow Redis dominating a high p99 reads 'Redis is slow'", () => {
    expect(latencyPartsText({ eventLoopP99Seconds: 0.011, redisUsecPerCall: 90_000, dominant: "redis" }, 0.12)).toContain("Redis is slow");
  });
  it("below the threshold it only says which part is larger", () => {
    expect(latencyPartsText({ eventLoopP99Seconds: 0.011, redisUsecPerCall: 5, dominant: "consumer" }, 0.012)).toContain("mostly the consumer");
  });
  it("embedded mode (no Redis figure) never names Redis", () => {
    const t = latencyPartsText({ eventLoopP99Seconds: 0.04, redisUsecPerCall: null, dominant: "consumer" }, 0.045);
    expect(t).toContain("event loop p99");
    expect(t).not.toMatch(/redis/i);
  });
});

describe("the error tile names its top reason and what it means", () => {
  it("names the top reason with its share of the errors: a bad record reads as a publisher bug, not Redis", () => {
    expect(topReasonText({ marshal: 0.02, redis_conn: 0, redis_timeout: 0 })).toBe("mostly marshal, 100% of errors (publisher bug: records without a usable UUID, sent to the DLQ)");
    expect(topReasonText({ marshal: 0, redis_conn: 3, redis_timeout: 0.1 })).toBe("mostly redis_conn, 96.8% of errors (Redis unreachable)");
    expect(topReasonText({ marshal: 0, redis_conn: 0 })).toBeNull();
  });
});
