/** The headline ratio: lease batch claims against `redis-benchmark -P 64`, in interleaved rounds. */
import type { Redis } from "ioredis";
import { Deduplicator, RedisRepository } from "@/server/dedup";
import { median } from "../../lib/stats";
import { cleanup, messages, timeIt } from "./measure";
import { redisBenchmark } from "./redis-benchmark";
import { BATCH, N, run } from "./settings";

/**
 * The headline ratio, robust to the load of a shared machine: five rounds, each a short
 * `redis-benchmark -P 64` run right next to a short run of lease batch claims (single stream and
 * four in flight); the ratio of each round, then the median over rounds.
 */
export async function interleavedRatios(client: Redis): Promise<{ single: number; x4: number; rounds: string[] }> {
  const repo = new RedisRepository(client);
  const single: number[] = [];
  const x4: number[] = [];
  const rounds: string[] = [];
  const n = Math.min(N, 20_000);
  for (let r = -1; r < 5; r++) {
    const ref = r < 0 ? 1 : redisBenchmark(64, 300_000); // round -1 warms the JIT up and is not recorded
    const prefix = `${run}:ratio${r}`;
    const d = new Deduplicator({ repository: repo, prefix: `${prefix}:dedup:h`, ttlMs: 60_000, leaseMs: 60_000 });
    const msgs = messages(n, `r${r}`);
    const one =
      n /
      (await timeIt(async () => {
        for (let i = 0; i < n; i += BATCH) await d.prepareBatch(msgs.slice(i, i + BATCH));
      }));
    const msgs4 = messages(n, `r4${r}`);
    let at = 0;
    const four =
      n /
      (await timeIt(async () => {
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            for (let i = at; i < n; i = at) {
              at += BATCH;
              await d.prepareBatch(msgs4.slice(i, i + BATCH));
            }
          }),
        );
      }));
    await cleanup(client, prefix);
    if (r < 0) continue;
    single.push(one / ref);
    x4.push(four / ref);
    rounds.push(
      `P64 ${ref.toFixed(0)}/s: ${one.toFixed(0)} (${(one / ref).toFixed(3)}), x4 ${four.toFixed(0)} (${(four / ref).toFixed(3)})`,
    );
  }
  return { single: median(single), x4: median(x4), rounds };
}
