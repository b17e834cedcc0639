import { describe, expect, it } from "vitest";
import { CHECK_DURATION_BUCKETS, HANDLER_TIME_BUCKETS } from "@/names/buckets";
import { formatSecondsAsMs, formatSeconds } from "./format";
import { bucketOf, bucketText, formatBucket, formatQuantile } from "./quantile-bucket";

describe("a histogram quantile is shown with the bucket it was interpolated in", () => {
  it("100 ms added to every check reads as the 100–250 ms bucket, not as a 248.5 ms check", () => {
    expect(formatQuantile(0.2485, CHECK_DURATION_BUCKETS, formatSecondsAsMs)).toBe("248.5 ms (bucket 100–250 ms)");
  });
  it("a p99 on a bound belongs to the bucket below it (Prometheus interpolates up to the bound)", () => {
    expect(bucketOf(0.05, CHECK_DURATION_BUCKETS)).toEqual({ lo: 0.025, hi: 0.05 });
    expect(bucketText(0.05, CHECK_DURATION_BUCKETS)).toBe("bucket 25–50 ms");
  });
  it("the first bucket starts at 0 and sub-millisecond bounds keep their decimals", () => {
    expect(bucketText(0.0003, CHECK_DURATION_BUCKETS)).toBe("bucket 0–0.5 ms");
    expect(bucketText(0.0008, CHECK_DURATION_BUCKETS)).toBe("bucket 0.5–1 ms");
  });
  it("the highest bound is what Prometheus answers for a quantile above it: 'over' the bound before", () => {
    expect(bucketText(2.5, CHECK_DURATION_BUCKETS)).toBe("bucket over 1 s");
  });
  it("a bucket across the second names both units, handler time in seconds", () => {
    expect(formatBucket({ lo: 0.5, hi: 1 })).toBe("500 ms–1 s");
    expect(formatQuantile(23.4, HANDLER_TIME_BUCKETS, formatSeconds)).toBe("23.4 s (bucket 15–30 s)");
  });
  it("no figure, no bucket", () => {
    expect(formatQuantile(null, CHECK_DURATION_BUCKETS, formatSecondsAsMs)).toBe("—");
    expect(bucketText(undefined, CHECK_DURATION_BUCKETS)).toBeNull();
  });
});
