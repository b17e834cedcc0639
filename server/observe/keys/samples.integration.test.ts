/**
 * Bytes per key, the figure the capacity projection multiplies projected keys by, against what
 * Redis really spends: `used_memory` before and after seeding dedup keys with a TTL into a private
 * redis-server (random port, stopped by pid). `MEMORY USAGE` alone leaves out the expires dict and
 * the hash tables' buckets (≈ 30% of a dedup key); the inspector adds them (target: ±10%).
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAccum, type Accum } from "./accum";
import { KeyInspector } from "./inspector";
import { readSamples } from "./samples";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { seedKeys } from "@/server/testing/seed-keys";

const KEYS = 60_000;
let srv: OwnRedis;
let r: Redis;

async function usedMemory(): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await r.info("memory"))![1]);
}

beforeAll(async () => {
  srv = await startOwnRedis();
  r = new Redis(srv.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  r?.disconnect();
  await srv?.stop();
});

describe("bytes per key against used_memory", () => {
  it.each([
    { name: "lease keys in state done", value: "done" },
    { name: "naive keys", value: "1" },
    { name: "release keys", value: "claimed:Zk3q9xT0aB1c" },
  ])(
    "$name: the inspector's bytes/key is within 10 percent of the measured delta",
    async ({ value }) => {
      await r.flushall();
      const before = await usedMemory();
      await seedKeys(r, [{ prefix: "billing:dedup:charge", count: KEYS, ttlMs: 24 * 3_600_000, value }]);
      const measured = ((await usedMemory()) - before) / KEYS;

      const insp = await new KeyInspector(r, { prefixes: ["*:dedup:*"], refreshMinIntervalMs: 0 }).run("exact");
      const h = insp.handlers.find((x) => x.prefix === "billing:dedup:charge")!;
      expect(h.keyCount).toBe(KEYS);
      expect(h.bytesPerKey).not.toBeNull();
      expect(Math.abs(h.bytesPerKey! / measured - 1)).toBeLessThanOrEqual(0.1);

      // What the projection used before: MEMORY USAGE alone, well below what the keys cost.
      const p = r.pipeline();
      for (let i = 0; i < 200; i++) p.call("MEMORY", "USAGE", (await r.randomkey())!, "SAMPLES", "0");
      const usage = ((await p.exec()) ?? []).map(([, v]) => Number(v));
      const usageMean = usage.reduce((a, b) => a + b, 0) / usage.length;
      expect(usageMean / measured - 1).toBeLessThan(-0.2);
    },
    60_000,
  );
});

describe("sample reads (readSamples)", () => {
  it("reads state, TTL and bytes of every sample key in budgeted calls; a key gone meanwhile is left out, a key of another type is other", async () => {
    await r.flushall();
    const prefix = "billing:dedup:charge";
    const keys = Array.from({ length: 450 }, (_, i) => `${prefix}:k${i}`);
    const p = r.pipeline();
    keys.forEach((k, i) => {
      if (i < 300) p.set(k, "done", "PX", 3_600_000);
      else if (i < 400) p.set(k, "processing:tok", "PX", 60_000);
      else if (i < 440)
        p.set(k, "1"); // no TTL
      else p.hset(k, "f", "v"); // not a string: its value cannot be read
    });
    await p.exec();
    const sampled = [...keys, `${prefix}:gone1`, `${prefix}:gone2`];
    const accums = new Map<string, Accum>();
    const a = getAccum(accums, prefix);
    a.samples = sampled.map((key) => ({ key, node: 0 }));
    // The smallest budget: each call stops after a few chunks of ten keys, the next goes on.
    const stats = (await readSamples([r], accums, 1000, 200)).get(prefix)!;
    expect(stats.size).toBe(450);
    expect(stats.states).toEqual({ processing: 100, done: 300, marked: 40, other: 10 });
    expect(stats.noTtl).toBe(50);
    expect(stats.leaseBuckets.reduce((x, y) => x + y, 0)).toBe(100);
    expect(stats.maxTtl).toBeGreaterThan(3_500_000);
    expect(stats.bytesPerKey).toBeGreaterThan(50);
  });
});
