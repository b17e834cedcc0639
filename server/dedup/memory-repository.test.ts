import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryRepository } from "./memory-repository";
import { parseClaimValue } from "./repository";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("MemoryRepository", () => {
  it("claims once, reports the existing value, and frees the key after its TTL", async () => {
    const r = new MemoryRepository();
    expect(await r.claim("k", "processing:a", 1000)).toBeNull();
    expect(await r.claim("k", "processing:b", 1000)).toBe("processing:a");
    vi.advanceTimersByTime(1000);
    expect(await r.claim("k", "processing:b", 1000)).toBeNull();
  });

  it("compare-and-set / compare-and-delete act only on the expected value", async () => {
    const r = new MemoryRepository();
    await r.claim("k", "processing:a", 1000);
    expect(await r.compareAndSet("k", "processing:x", "done", 5000)).toBe(false);
    expect(await r.compareAndDelete("k", "processing:x")).toBe(false);
    expect(await r.compareAndSet("k", "processing:a", "done", 5000)).toBe(true);
    expect(r.pttl("k")).toBe(5000);
    expect(await r.compareAndDelete("k", "processing:a")).toBe(false);
    expect(await r.compareAndDelete("k", "done")).toBe(true);
    expect(r.get("k")).toBeNull();
  });

  it("claimBatch gives per-claim replies in order; maxKeys rejects only the claims beyond it", async () => {
    const r = new MemoryRepository({ maxKeys: 2 });
    await r.claim("a", "done", 1000);
    const out = await r.claimBatch([
      { key: "a", value: "v", ttlMs: 1000 },
      { key: "b", value: "v", ttlMs: 1000 },
      { key: "c", value: "v", ttlMs: 1000 },
    ]);
    expect(out[0]).toBe("done");
    expect(out[1]).toBeNull();
    expect(out[2]).toBeInstanceOf(Error);
  });

  it("sweeps expired keys so size() counts live keys only", async () => {
    const r = new MemoryRepository({ sweepIntervalMs: 0 });
    for (let i = 0; i < 10; i++) await r.claim(`k${i}`, "1", 100 * (i + 1));
    vi.advanceTimersByTime(500);
    expect(r.size()).toBe(5);
  });

  it("parseClaimValue decodes every marking's values", () => {
    expect(parseClaimValue("done")).toEqual({ state: "done" });
    expect(parseClaimValue("processing:t1")).toEqual({ state: "processing", token: "t1" });
    expect(parseClaimValue("claimed:t2")).toEqual({ state: "claimed", token: "t2" });
    expect(parseClaimValue("1")).toEqual({ state: "naive" });
    expect(parseClaimValue("zzz")).toEqual({ state: "unknown", raw: "zzz" });
  });
});
