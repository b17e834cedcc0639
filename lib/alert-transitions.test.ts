import { describe, expect, it } from "vitest";
import { alertTimes, firstEvaluationAtOrAfter, timeToFireMs } from "./alert-transitions";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const S = 1000;
const M = 60 * S;

describe("firstEvaluationAtOrAfter", () => {
  it("is activeAt + for when for is a whole number of intervals", () => {
    expect(firstEvaluationAtOrAfter(T0, M, 15 * S)).toBe(T0 + M);
    expect(firstEvaluationAtOrAfter(T0, 10 * M, 5 * S)).toBe(T0 + 10 * M);
  });

  it("is the next evaluation after the boundary when for is not (1m hold, 25 s interval: 75 s)", () => {
    expect(firstEvaluationAtOrAfter(T0, M, 25 * S)).toBe(T0 + 75 * S);
    // An evaluation 1 ms before the boundary does not fire; the next one, one interval later, does.
    expect(firstEvaluationAtOrAfter(T0, M, M - 1)).toBe(T0 + 2 * (M - 1));
    // An evaluation 1 ms after the boundary fires.
    expect(firstEvaluationAtOrAfter(T0, M, M + 1)).toBe(T0 + M + 1);
  });

  it("for: 0 fires on the evaluation that saw the condition", () => {
    expect(firstEvaluationAtOrAfter(T0, 0, 15 * S)).toBe(T0);
  });

  it("an unknown interval falls back to activeAt + for", () => {
    expect(firstEvaluationAtOrAfter(T0, M, 0)).toBe(T0 + M);
  });
});

describe("alertTimes", () => {
  it("pending: pending since activeAt, fires at the first evaluation past the hold, not firing", () => {
    expect(alertTimes({ state: "pending", activeAtMs: T0, forMs: M, intervalMs: 25 * S })).toEqual({
      pendingSince: T0,
      firingSince: null,
      firesAt: T0 + 75 * S,
    });
  });

  it("firing: firing since the computed transition, not since activeAt (the issue's 17 vs 7 min)", () => {
    const activeAt = T0 - 17 * M;
    const t = alertTimes({ state: "firing", activeAtMs: activeAt, forMs: 10 * M, intervalMs: 5 * S });
    expect(t.pendingSince).toBe(activeAt);
    expect(t.firingSince).toBe(T0 - 7 * M);
    expect(t.firesAt).toBeNull();
  });

  it("firing with for: 0 fired when it went active", () => {
    expect(alertTimes({ state: "firing", activeAtMs: T0, forMs: 0, intervalMs: 5 * S }).firingSince).toBe(T0);
  });

  it("an evaluator's observed firing time wins over the arithmetic", () => {
    const t = alertTimes({
      state: "firing",
      activeAtMs: T0,
      forMs: M,
      intervalMs: 5 * S,
      observedFiringMs: T0 + 65 * S,
    });
    expect(t.firingSince).toBe(T0 + 65 * S);
  });

  it("inactive or unknown activeAt: no times", () => {
    const none = { pendingSince: null, firingSince: null, firesAt: null };
    expect(alertTimes({ state: "inactive", activeAtMs: T0, forMs: M, intervalMs: 5 * S })).toEqual(none);
    expect(alertTimes({ state: "pending", activeAtMs: null, forMs: M, intervalMs: 5 * S })).toEqual(none);
  });
});

describe("timeToFireMs", () => {
  it("counts down to the due evaluation and never goes negative", () => {
    expect(timeToFireMs(T0 + 40 * S, T0)).toBe(40 * S);
    expect(timeToFireMs(T0, T0)).toBe(0);
    expect(timeToFireMs(T0, T0 + 3 * S)).toBe(0);
    expect(timeToFireMs(null, T0)).toBeNull();
  });
});
