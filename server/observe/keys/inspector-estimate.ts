/**
 * The Redis key inspector's estimate: blocks of keys from random SCAN cursors on each master, in
 * proportion to its DBSIZE, counted per handler prefix by the aggregate script within its time
 * budget; counts scaled back to the keyspace with a bound per prefix.
 */
import type { Redis } from "ioredis";
import type { PrefixGlobs } from "./glob";
import { mergeReply, scaleEstimate, TTL_BUCKET_BOUNDS, type Accum } from "./accum";
import type { KeyInspectorOptions } from "./inspector-options";
import { runAggregate } from "./scripts";
import { nodeId } from "../redis/client";
import { countUpstream } from "../core/upstream-counter";

/** Keys per handler whose value, size and TTL an estimate reads. */
export const ESTIMATE_SAMPLE_READS = 200;
/** Estimate script calls kept in flight per master, so Redis never waits for the next one's round trip. */
const ESTIMATE_IN_FLIGHT = 2;
/** Most keys one estimate call is asked for (it stops earlier at its time budget). */
const MAX_DRAWS_PER_CALL = 4000;
/** Random cursors sent with one estimate call (a block of ~16 keys each). */
const CURSORS_PER_CALL = 250;

/** Sampled keys (blocks from random SCAN cursors) on each master in proportion to its size; counts scaled by DBSIZE. */
export async function estimateKeys(nodes: Redis[], sizes: number[], opts: KeyInspectorOptions, globs: PrefixGlobs) {
  const total = sizes.reduce((a, b) => a + b, 0);
  // Per master: draws, and per prefix the raw hit counts, to scale and bound per master.
  const perNode: Array<{ draws: number; size: number; accums: Map<string, Accum> }> = [];
  let calls = 0;
  let maxMicros = 0;
  const drawsByMaster: Record<string, number> = {};
  await Promise.all(
    nodes.map(async (node, ni) => {
      const size = sizes[ni] ?? 0;
      const want = total === 0 ? 0 : Math.ceil((opts.estimateSamples * size) / total);
      const accums = new Map<string, Accum>();
      let draws = 0;
      let asked = 0; // draws requested by calls in flight or done
      let empty = false;
      // Two calls in flight: each stops at its time budget and returns the draws it did not make.
      const worker = async () => {
        while (asked < want && !empty) {
          const n = Math.min(MAX_DRAWS_PER_CALL, want - asked);
          asked += n;
          const r = await countUpstream("redis", () =>
            runAggregate(node, {
              mode: "sample",
              cursor: "0",
              count: n,
              bucketBoundsMs: TTL_BUCKET_BOUNDS,
              luaPatterns: globs.luaPatterns(),
              // Chunks of four blocks: one sample key per prefix and chunk still offers each
              // handler's reservoir hundreds of keys over 40,000 draws.
              samplesPerGroup: 1,
              matchGlob: "",
              // Draws only count: TTLs come from the sample reads, so a draw costs half as much.
              ttlPerKey: false,
              budgetMicros: opts.maxCallMicros,
              cursors: randomCursors(CURSORS_PER_CALL, size),
            }),
          );
          calls++;
          maxMicros = Math.max(maxMicros, r.micros);
          asked -= n - r.visited;
          if (r.visited === 0) empty = true; // empty database
          draws += r.visited;
          mergeReply(accums, r, ni, { handlers: opts.maxHandlers, samples: opts.sampleKeysPerHandler });
        }
      };
      await Promise.all(Array.from({ length: ESTIMATE_IN_FLIGHT }, worker));
      perNode.push({ draws, size, accums });
      drawsByMaster[nodeId(node)] = draws;
    }),
  );
  return { ...scaleEstimate(perNode), calls, maxMicros, drawsByMaster };
}

/**
 * `n` random SCAN cursors for a dict of about `size` keys: uniform below the next power of two ≥ size
 * (Redis masks a cursor by the table size, so a bigger table still sees uniform bucket indices).
 */
export function randomCursors(n: number, size: number): string[] {
  const bits = Math.max(1, Math.ceil(Math.log2(Math.max(2, size))) + 1);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(String(Math.floor(Math.random() * 2 ** Math.min(bits, 52))));
  return out;
}
