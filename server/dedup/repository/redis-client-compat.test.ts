import type { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { clusterSlot } from "./cluster-slot";
import type { DedupRedisClient } from "./redis-repository";

// Compile-time: ioredis Redis and Cluster fit the narrow client interface as they are.
export const fitsRedis = (r: Redis): DedupRedisClient => r;
export const fitsCluster = (c: Cluster): DedupRedisClient => c;

describe("clusterSlot", () => {
  it("matches Redis CLUSTER KEYSLOT for known keys and honours hash tags", () => {
    // Values from the Redis Cluster spec / `CLUSTER KEYSLOT`.
    expect(clusterSlot("foo")).toBe(12182);
    expect(clusterSlot("123456789")).toBe(12739);
    expect(clusterSlot("{user1000}.following")).toBe(clusterSlot("user1000"));
    expect(clusterSlot("foo{}{bar}")).toBe(clusterSlot("foo{}{bar}"));
  });
});
