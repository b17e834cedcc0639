import { describe, expect, it } from "vitest";
import { expectEach } from "@/server/testing/expect-each";
import { keysWithoutTtl, TTL_BUCKETS } from "./accum";
import { KeyInspector } from "./inspector";
import { classifyValue } from "./samples";
import type { RedisLike } from "../redis/client";

describe("classifyValue", () => {
  it("reads the lease marking's processing:<token> and done, and the naive marking's 1", () => {
    expectEach(classifyValue, {
      "processing:6f1c": "processing",
      done: "done",
      "1": "marked",
      "claimed:9a0b": "marked",
      '{"json":true}': "other",
    });
  });
});

describe("keysWithoutTtl", () => {
  it("is keys − expires of the selected db from INFO keyspace", () => {
    const info = "# Keyspace\r\ndb0:keys=1000,expires=990,avg_ttl=1\r\ndb3:keys=5,expires=5,avg_ttl=0\r\n";
    expect(keysWithoutTtl(info, 0)).toBe(10);
    expect(keysWithoutTtl(info, 3)).toBe(0);
    expect(keysWithoutTtl(info, 1)).toBe(0);
  });
});

describe("TTL_BUCKETS", () => {
  it("separate the 10 min minimum and the 1 h / 24 h / 7 d windows of spec §3", () => {
    const bounds = TTL_BUCKETS.map((b) => b.maxMs);
    for (const ms of [10 * 60_000, 3_600_000, 86_400_000, 7 * 86_400_000]) expect(bounds).toContain(ms);
    expect(bounds.at(-1)).toBeNull();
  });
});

describe("KeyInspectorOptions", () => {
  it("rejects out-of-range options naming them", () => {
    const fake = {} as RedisLike;
    expect(() => new KeyInspector(fake, { scanCount: 5000 })).toThrow(/scanCount/);
    expect(() => new KeyInspector(fake, { maxCallMicros: 10_000 })).toThrow(/maxCallMicros/);
    expect(() => new KeyInspector(fake, { ttlCheck: "never" as "sample" })).toThrow(/ttlCheck/);
    expect(() => new KeyInspector(fake, { prefixes: [] })).toThrow(/prefixes/);
  });
});

describe("splitByState: leases apart from settled keys", () => {
  it("scales the sampled shares to the count and lets done take the rounding", async () => {
    const { splitByState } = await import("./accum");
    expect(splitByState(1207, { processing: 1, done: 499, marked: 0, other: 0 }, 500, true)).toEqual({
      processing: 2,
      done: 1205,
      marked: 0,
      other: 0,
      exact: false,
      leaseShare: 0.002,
    });
    // A sample of every key of an exact count is a count.
    expect(splitByState(300, { processing: 3, done: 297, marked: 0, other: 0 }, 300, true)).toMatchObject({
      processing: 3,
      done: 297,
      exact: true,
      leaseShare: 0.01,
    });
    expect(splitByState(300, { processing: 3, done: 297, marked: 0, other: 0 }, 300, false).exact).toBe(false);
    expect(splitByState(50, { processing: 0, done: 0, marked: 0, other: 0 }, 0, true)).toMatchObject({
      done: 50,
      leaseShare: null,
    });
  });
});
