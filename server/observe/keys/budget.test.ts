import { describe, expect, it } from "vitest";
import { RateLimitedError } from "../core/errors";
import { ClientConcurrency, RedisBudget } from "./budget";

describe("RedisBudget", () => {
  it("gives out `burst` calls at once, then `callsPerSecond` as time passes", () => {
    let t = 0;
    const b = new RedisBudget({ callsPerSecond: 10, burst: 5, maxWaitMs: 0 }, () => t);
    for (let i = 0; i < 5; i++) expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
    t += 100; // one token back
    expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
    t += 10_000; // capped at burst
    for (let i = 0; i < 5; i++) expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
  });

  it("take() answers RateLimitedError with a Retry-After when the wait would pass maxWaitMs", async () => {
    let t = 0;
    const b = new RedisBudget({ callsPerSecond: 1, burst: 1, maxWaitMs: 0 }, () => t);
    await b.take();
    const e = await b.take().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RateLimitedError);
    expect((e as RateLimitedError).status).toBe(429);
    expect((e as RateLimitedError).retryAfterSeconds).toBe(1);
    await expect(b.take(2)).rejects.toThrow(/burst/);
  });

  it("takeWithin() waits for a token that comes back in time, and gives up (taking nothing) when it would not", async () => {
    const b = new RedisBudget({ callsPerSecond: 50, burst: 1, maxWaitMs: 0 });
    expect(await b.takeWithin(1, 0)).toBe(true);
    const t0 = performance.now();
    expect(await b.takeWithin(1, 200)).toBe(true); // back after ~20 ms
    expect(performance.now() - t0).toBeGreaterThanOrEqual(10);
    expect(await b.takeWithin(1, 5)).toBe(false);
    expect(await b.takeWithin(2, 10_000)).toBe(false); // more than the burst: never
  });

  it("runs at most maxInFlight calls at once, the others in order", async () => {
    const b = new RedisBudget({ maxInFlight: 2 });
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        b.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 5));
          order.push(i);
          running--;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it("validates its options", () => {
    expect(() => new RedisBudget({ callsPerSecond: 0 })).toThrow(RangeError);
    expect(() => new RedisBudget({ maxInFlight: 0 })).toThrow(/maxInFlight/);
  });
});

describe("ClientConcurrency", () => {
  it("refuses a client's request beyond the limit (429) and frees the slot when one ends", async () => {
    const c = new ClientConcurrency(2);
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const a = c.run("x", () => hold);
    const b = c.run("x", () => hold);
    await expect(c.run("x", async () => 1, 30)).rejects.toBeInstanceOf(RateLimitedError);
    expect(await c.run("y", async () => 2)).toBe(2);
    release();
    await Promise.all([a, b]);
    expect(await c.run("x", async () => 3)).toBe(3);
  });
});
