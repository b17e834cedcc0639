import { describe, expect, it } from "vitest";
import { median, percentile } from "./stats";

describe("median", () => {
  it("is the middle sample of an odd count and the mean of the two middle ones of an even count, whatever the order", () => {
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });
  it("is NaN without samples and leaves its input unsorted", () => {
    expect(median([])).toBeNaN();
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe("percentile", () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1
  it("is the nearest-rank sample: p95 of 1..100 is 95, p99 is 99, p100 the largest, p0 the smallest", () => {
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
  });
  it("rounds the rank up, so a tail of a few samples still shows in a high percentile", () => {
    expect(percentile([1, 2, 3, 4, 50], 90)).toBe(50);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
  });
  it("is NaN without samples and refuses a p outside [0, 100]", () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], 0.95 * -1)).toThrow(RangeError);
  });
});
