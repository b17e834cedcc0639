import { afterEach, describe, expect, it, vi } from "vitest";
import { SharedCache } from "./cache";

afterEach(() => vi.useRealTimers());

describe("SharedCache", () => {
  it("shares one in-flight call between 50 concurrent callers", async () => {
    const c = new SharedCache({ ttlMs: 1000 });
    let calls = 0;
    let release!: (v: number) => void;
    const load = () => {
      calls++;
      return new Promise<number>((r) => (release = r));
    };
    const all = Promise.all(Array.from({ length: 50 }, () => c.get("k", load)));
    release(42);
    expect(await all).toEqual(Array(50).fill(42));
    expect(calls).toBe(1);
  });

  it("serves the answer for ttlMs, then loads again", async () => {
    vi.useFakeTimers();
    const c = new SharedCache({ ttlMs: 1000 });
    let n = 0;
    const load = async () => ++n;
    expect(await c.get("k", load)).toBe(1);
    vi.advanceTimersByTime(999);
    expect(await c.get("k", load)).toBe(1);
    vi.advanceTimersByTime(2);
    expect(await c.get("k", load)).toBe(2);
  });

  it("remembers a failure for errorTtlMs so a down upstream is not hammered", async () => {
    vi.useFakeTimers();
    const c = new SharedCache({ ttlMs: 5000, errorTtlMs: 500 });
    let n = 0;
    const load = async () => {
      n++;
      throw new Error("down");
    };
    await expect(c.get("k", load)).rejects.toThrow("down");
    await expect(c.get("k", load)).rejects.toThrow("down");
    expect(n).toBe(1);
    vi.advanceTimersByTime(501);
    await expect(c.get("k", load)).rejects.toThrow("down");
    expect(n).toBe(2);
  });

  it("validates its options naming the option", () => {
    expect(() => new SharedCache({ ttlMs: -1 })).toThrow(/ttlMs/);
    expect(() => new SharedCache({ maxEntries: 0 })).toThrow(/maxEntries/);
  });
});
