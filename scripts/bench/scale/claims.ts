/**
 * Step 1 of bench:scale: batch claims/s of `RedisRepository.claimBatch` on the standalone server
 * (one script call per batch, and one pipeline) against the Redis Cluster (one pipeline per master).
 */
import { randomBytes } from "node:crypto";
import { Cluster, type Redis } from "ioredis";
import { RedisRepository, type DedupRedisClient, type RedisRepositoryOptions } from "@/server/dedup";
import { deletePrefix } from "@/server/testing/redis-cluster";
import { intArg } from "../../lib/args";
import { percentile } from "../../lib/stats";
import { CLUSTER_NODES, REDIS_URL, clusterClient, ready, standaloneClient } from "./clients";

export interface ClaimFigures {
  target: string;
  concurrency: number;
  /** Requests sent per batch (pipelines + single calls): the round trips a batch costs. */
  roundTripsPerBatch: number;
  claimsPerSecond: number;
  batchP50Ms: number;
  batchP99Ms: number;
}

/** The client behind the repository's narrow interface, counting requests (a pipeline is one round trip). */
function counted(c: Redis | Cluster): { client: DedupRedisClient; trips: { n: number } } {
  const trips = { n: 0 };
  const client: DedupRedisClient = {
    isCluster: c instanceof Cluster,
    get slots() {
      return c instanceof Cluster ? c.slots : undefined;
    },
    call: (command, ...args) => {
      trips.n++;
      return c.call(command, ...args);
    },
    pipeline: () => {
      const p = c.pipeline();
      return {
        call: (command: string, ...args: Array<string | number>) => p.call(command, ...args),
        exec: () => {
          trips.n++;
          return p.exec();
        },
      };
    },
  };
  return { client, trips };
}

/** `concurrency` loops claiming batches of new keys for `seconds`: claims/s, round trips and latency. */
async function claimRun(
  c: Redis | Cluster,
  opts: RedisRepositoryOptions,
  prefix: string,
  seconds: number,
  batch: number,
  concurrency: number,
  target: string,
): Promise<ClaimFigures> {
  const { client, trips } = counted(c);
  const repo = new RedisRepository(client, opts);
  let batches = 0;
  const lat: number[] = [];
  let claims = 0;
  let next = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const reqs = Array.from({ length: batch }, () => ({
          key: `${prefix}:${(next++).toString(36)}`,
          value: "processing:bench",
          ttlMs: 120_000,
        }));
        const t0 = performance.now();
        const out = await repo.claimBatch(reqs);
        lat.push(performance.now() - t0);
        batches++;
        const failed = out.find((r) => r instanceof Error);
        if (failed) throw failed;
        claims += batch;
      }
    }),
  );
  const q = (p: number) => Math.round((percentile(lat, p) || 0) * 100) / 100;
  return {
    target,
    concurrency,
    roundTripsPerBatch: Math.round((trips.n / Math.max(1, batches)) * 100) / 100,
    claimsPerSecond: Math.round(claims / seconds),
    batchP50Ms: q(50),
    batchP99Ms: q(99),
  };
}

/** Every target at 1 and `--concurrency` batches in flight, after a warm-up; deletes its keys. */
export async function benchClaims(): Promise<ClaimFigures[]> {
  const seconds = intArg("claim-seconds", 3, 1, 60);
  const batch = intArg("batch", 100, 1, 5000);
  const concurrency = intArg("concurrency", 4, 1, 64);
  const standalone = standaloneClient();
  const cluster = clusterClient();
  await Promise.all([
    ready(standalone, `Redis ${REDIS_URL}`),
    ready(cluster, `Redis Cluster ${CLUSTER_NODES.join(",")}`),
  ]);
  const prefix = `bench-scale-${randomBytes(4).toString("hex")}:dedup:claims`;
  const targets: Array<{ name: string; client: Redis | Cluster; opts: RedisRepositoryOptions }> = [
    { name: "standalone (script per batch)", client: standalone, opts: { batchCommand: "script" } },
    { name: "standalone (pipeline per batch)", client: standalone, opts: { batchCommand: "pipeline" } },
    { name: "cluster, 3 masters (pipeline per master)", client: cluster, opts: {} },
  ];
  const out: ClaimFigures[] = [];
  try {
    // Warm-up: connections, scripts loaded on every node, JIT.
    for (const t of targets) await claimRun(t.client, t.opts, `${prefix}:w`, 0.3, batch, concurrency, t.name);
    for (const c of [1, concurrency]) {
      for (const t of targets) {
        const f = await claimRun(t.client, t.opts, `${prefix}:${out.length}`, seconds, batch, c, t.name);
        out.push(f);
        console.log(
          `[claims] ${t.name.padEnd(42)} ${c} in flight: ${f.claimsPerSecond.toLocaleString("en")} claims/s, ${f.roundTripsPerBatch} round trip(s) per batch of ${batch}, p50 ${f.batchP50Ms} ms p99 ${f.batchP99Ms} ms`,
        );
      }
    }
  } finally {
    await deletePrefix(standalone, prefix);
    await deletePrefix(cluster, prefix);
    standalone.disconnect();
    cluster.disconnect();
  }
  return out;
}
