import { describe, expect, it } from "vitest";
import { clusterSlot } from "./cluster-slot";
import { RedisRepository, type DedupRedisClient, type DedupRedisPipeline } from "./redis-repository";
import { COMPARE_AND_SET_LUA } from "./redis-scripts";

/** A fake cluster client: a map per "node", slots 0–8191 on node A and the rest on node B. */
function fakeCluster() {
  const data = new Map<string, string>();
  const pipelines: string[][] = [];
  const slots = Array.from({ length: 16384 }, (_, s) => [s < 8192 ? "A:7000" : "B:7001"]);
  const exec = (args: Array<string | number>): unknown => {
    const [cmd, key, value] = args as string[];
    if (cmd === "SET") {
      const old = data.get(key!) ?? null;
      if (old === null) data.set(key!, value!);
      return old;
    }
    if (cmd === "EVALSHA") throw new Error("NOSCRIPT No matching script");
    if (cmd === "EVAL") {
      const [, , , k, expected, next] = args as string[];
      if (data.get(k!) !== expected) return 0;
      data.set(k!, next!);
      return 1;
    }
    throw new Error(`unexpected ${cmd}`);
  };
  const client: DedupRedisClient = {
    isCluster: true,
    slots,
    call: async (...args) => exec(args),
    pipeline(): DedupRedisPipeline {
      const queued: Array<Array<string | number>> = [];
      return {
        call: (...args) => queued.push(args),
        exec: async () => {
          pipelines.push(queued.map((q) => String(q[1])));
          const nodes = new Set(queued.map((q) => slots[clusterSlot(String(q[1]))]![0]));
          if (nodes.size > 1) throw new Error("keys of one pipeline on several nodes");
          return queued.map((q) => [null, exec(q)] as [Error | null, unknown]);
        },
      };
    },
  };
  return { client, data, pipelines };
}

describe("RedisRepository (fake client)", () => {
  it("on a Cluster, sends one pipeline per node and keeps replies in request order", async () => {
    const { client, data, pipelines } = fakeCluster();
    const keys = Array.from({ length: 20 }, (_, i) => `svc:dedup:h:${i}`);
    data.set(keys[3]!, "done");
    const repo = new RedisRepository(client);
    const out = await repo.claimBatch(keys.map((key) => ({ key, value: "processing:t", ttlMs: 1000 })));
    expect(pipelines).toHaveLength(2);
    expect(pipelines.flat().sort()).toEqual([...keys].sort());
    expect(out).toEqual(keys.map((_, i) => (i === 3 ? "done" : null)));
  });

  it("falls back from EVALSHA to EVAL on NOSCRIPT", async () => {
    const { client, data } = fakeCluster();
    data.set("k", "processing:me");
    expect(await new RedisRepository(client).compareAndSet("k", "processing:me", "done", 1000)).toBe(true);
    expect(data.get("k")).toBe("done");
    expect(COMPARE_AND_SET_LUA.sha).toMatch(/^[0-9a-f]{40}$/);
  });

  it("on a Cluster, claims a node's keys one by one when the client refuses that node's pipeline (slots moving)", async () => {
    const { client, data } = fakeCluster();
    const keys = Array.from({ length: 20 }, (_, i) => `svc:dedup:h:${i}`);
    data.set(keys[5]!, "done");
    let refused = 0;
    const refusing: DedupRedisClient = {
      ...client,
      pipeline() {
        const inner = client.pipeline();
        return {
          call: (...args) => inner.call(...args),
          exec: async () => {
            refused++;
            throw new Error("All keys in the pipeline should belong to the same slots allocation group");
          },
        };
      },
    };
    const out = await new RedisRepository(refusing).claimBatch(
      keys.map((key) => ({ key, value: "processing:t", ttlMs: 1000 })),
    );
    expect(refused).toBeGreaterThan(0);
    expect(out).toEqual(keys.map((_, i) => (i === 5 ? "done" : null)));
    expect(data.get(keys[0]!)).toBe("processing:t");
  });
});
