import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NonRetryableError } from "../errors";
import { newMessage } from "../message";
import { DEFAULT_RETRY_OPTIONS, maxRetryWaitMs, retry } from "./retry";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A handler that fails `failures` times, recording the fake time of each call. */
function flaky(failures: number, err: () => Error = () => new Error("boom")) {
  const calls: number[] = [];
  const fn = async () => {
    calls.push(Date.now());
    if (calls.length <= failures) throw err();
  };
  return { fn, calls };
}

describe("retry", () => {
  it("runs the first attempt at once, then backs off exponentially (no jitter), and succeeds on the third call", async () => {
    const h = flaky(2);
    const t0 = Date.now();
    const p = retry({ initialIntervalMs: 100, multiplier: 2, randomizationFactor: 0 })(h.fn)(newMessage("u", ""));
    await vi.advanceTimersByTimeAsync(0);
    expect(h.calls).toEqual([t0]);
    await vi.advanceTimersByTimeAsync(99);
    expect(h.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(200);
    await expect(p).resolves.toBeUndefined();
    expect(h.calls.map((c) => c - t0)).toEqual([0, 100, 300]);
  });

  it("applies jitter within interval × [1 − f, 1 + f] and caps at maxIntervalMs", async () => {
    const delays: number[] = [];
    const h = flaky(99);
    const p = retry({
      maxRetries: 4,
      initialIntervalMs: 1000,
      maxIntervalMs: 2000,
      multiplier: 3,
      randomizationFactor: 0.5,
      random: () => 0.999,
      onRetry: (i) => delays.push(i.delayMs),
    })(h.fn)(newMessage("u", ""));
    p.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(60_000);
    await expect(p).rejects.toThrow("boom");
    expect(h.calls).toHaveLength(5);
    expect(delays).toEqual([1499, 2998, 2998, 2998]);
  });

  it("stops at once on NonRetryableError and on retryable === false", async () => {
    const h = flaky(5, () => new NonRetryableError("bad payload"));
    await expect(retry()(h.fn)(newMessage("u", ""))).rejects.toBeInstanceOf(NonRetryableError);
    expect(h.calls).toHaveLength(1);
    const g = flaky(5, () => Object.assign(new Error("nope"), { retryable: false }));
    await expect(retry()(g.fn)(newMessage("u", ""))).rejects.toThrow("nope");
    expect(g.calls).toHaveLength(1);
  });

  it("honours shouldRetry and maxElapsedMs, and sets context.attempt", async () => {
    const attempts: number[] = [];
    const msg = newMessage("u", "");
    const failing = async () => {
      attempts.push(msg.context.attempt ?? 0);
      throw new Error("x");
    };
    const p = retry({
      maxRetries: 10,
      initialIntervalMs: 100,
      randomizationFactor: 0,
      multiplier: 1,
      maxElapsedMs: 250,
    })(failing)(msg);
    p.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(p).rejects.toThrow("x");
    expect(attempts).toEqual([1, 2, 3]); // a 4th would start at 300 ms > 250 ms
    const s = flaky(5);
    await expect(retry({ shouldRetry: () => false })(s.fn)(newMessage("u", ""))).rejects.toThrow("boom");
    expect(s.calls).toHaveLength(1);
  });

  it("stops waiting when the message's signal aborts", async () => {
    const ctl = new AbortController();
    const h = flaky(5);
    const p = retry({ initialIntervalMs: 10_000 })(h.fn)(newMessage("u", "", { signal: ctl.signal }));
    p.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(10);
    ctl.abort();
    await vi.advanceTimersByTimeAsync(0);
    await expect(p).rejects.toThrow("boom");
    expect(h.calls).toHaveLength(1);
  });

  it("validates options naming the option, and computes the default worst-case wait", () => {
    expect(() => retry({ multiplier: 0.5 })).toThrow(/multiplier/);
    expect(() => retry({ maxIntervalMs: 10, initialIntervalMs: 100 })).toThrow(/maxIntervalMs/);
    expect(maxRetryWaitMs(DEFAULT_RETRY_OPTIONS)).toBe(22_500);
  });
});
