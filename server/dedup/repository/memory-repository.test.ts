import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryRepository } from "./memory-repository";
import { parseClaimValue } from "./stored-value";
import { repositoryContractSuite } from "./repository.suite";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

repositoryContractSuite("memory", () => {
  const repo = new MemoryRepository();
  return {
    repo,
    key: (id) => `svc:dedup:h:${id}`,
    inspect: async (k) => ({ value: repo.get(k), pttlMs: repo.get(k) === null ? null : repo.pttl(k) }),
    elapse: async (ms) => void vi.advanceTimersByTime(ms),
  };
});

describe("MemoryRepository", () => {
  it("maxKeys rejects only the claims of a batch beyond it", async () => {
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
