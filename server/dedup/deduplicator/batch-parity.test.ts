import { describe, expect, it } from "vitest";
import { deduplicator } from "./deduplicator";
import { MemoryRepository } from "../repository/memory-repository";
import { newMessage, type Outcome } from "../message";
import { MemoryPubSub } from "../pubsub";
import { DONE_VALUE, PROCESSING_PREFIX } from "../repository/stored-value";
import { oneHandlerRouter } from "@/server/testing/one-handler-router";

/** Small deterministic PRNG (mulberry32) so a failing seed can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Scenario {
  uuids: string[];
  seeded: Map<string, string>;
  failing: Set<string>;
}

function scenario(seed: number): Scenario {
  const rnd = prng(seed);
  const pool = Array.from({ length: 12 }, (_, i) => `u${i}`);
  const uuids = Array.from({ length: 30 }, () => pool[Math.floor(rnd() * pool.length)]!);
  const seeded = new Map<string, string>();
  for (const u of pool) {
    const r = rnd();
    if (r < 0.2) seeded.set(u, DONE_VALUE);
    else if (r < 0.3) seeded.set(u, `${PROCESSING_PREFIX}other`);
  }
  const failing = new Set(pool.filter(() => rnd() < 0.1));
  return { uuids, seeded, failing };
}

/** Runs a scenario through the Router, as batches of `batchSize` or one by one, the way a transport does (stop and redeliver from a nack). */
async function play(s: Scenario, batchSize: number) {
  const repo = new MemoryRepository();
  for (const [u, v] of s.seeded) await repo.claim(`svc:dedup:h:${u}`, v, 60_000);
  const runs: string[] = [];
  const router = oneHandlerRouter({
    topic: "in",
    subscriber: new MemoryPubSub(),
    handler: async (m) => {
      runs.push(m.uuid);
      if (s.failing.has(m.uuid)) throw new Error("fails");
    },
    middleware: [deduplicator({ repository: repo, service: "svc" })],
  });
  const sink = router.sink("h");
  const outcomes: Outcome[] = [];
  // Deliver until the first nack (a transport would then redeliver from there; here the run ends).
  for (let i = 0; i < s.uuids.length;) {
    const chunk = s.uuids.slice(i, i + batchSize).map((u) => newMessage(u, ""));
    const out = batchSize === 1 ? [await sink.deliver(chunk[0]!)] : await sink.deliverBatch(chunk);
    outcomes.push(...out);
    if (out.includes("nack")) break;
    i += chunk.length;
  }
  // What a transport does before it commits: the batches' deferred `done` marks have landed.
  await sink.flush?.();
  const state = [...new Set(s.uuids)].sort().map((u) => [u, repo.get(`svc:dedup:h:${u}`)]);
  return { outcomes, runs, state };
}

describe("batch pre-claims give the same outcomes as one-by-one delivery", () => {
  it.each(Array.from({ length: 40 }, (_, i) => i + 1))("seed %i", async (seed) => {
    const s = scenario(seed);
    const single = await play(s, 1);
    for (const size of [4, 30]) {
      const batched = await play(s, size);
      expect(batched.outcomes, `batch ${size}`).toEqual(single.outcomes);
      expect(batched.runs, `batch ${size}`).toEqual(single.runs);
      // Keys end in the same state, except keys pre-claimed for messages after the nack: released.
      expect(batched.state, `batch ${size}`).toEqual(single.state);
    }
  });
});
