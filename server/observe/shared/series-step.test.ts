import { describe, expect, it } from "vitest";
import { normalizeStep, SERIES_STEPS } from "./series-step";

describe("normalizeStep", () => {
  it("raises any step to the next allowed one, so arbitrary values share a cache entry", () => {
    expect(normalizeStep("1h", 7)).toBe(10);
    expect(normalizeStep("1h", 8)).toBe(10);
    expect(normalizeStep("1h", 10)).toBe(10);
    expect(new Set([11, 12, 13, 14, 15].map((s) => normalizeStep("1h", s)))).toEqual(new Set([15]));
    expect(normalizeStep("1h", 86_400)).toBe(86_400);
  });

  it("never goes below range / 1000 points, and keeps an absent step absent", () => {
    expect(normalizeStep("7d", 1)).toBe(SERIES_STEPS.find((s) => s >= 605));
    expect(normalizeStep("5m", undefined)).toBeUndefined();
  });
});
