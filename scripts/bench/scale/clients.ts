/** The stack bench:scale measures against: Kafka brokers, the standalone Redis and the Redis Cluster. */
import { Cluster, Redis } from "ioredis";
import { RECOMMENDED_IOREDIS_OPTIONS } from "@/server/dedup";
import { clusterClient as seededCluster } from "@/server/testing/redis-cluster";

export const BROKERS = (process.env.KAFKA_BROKERS || "127.0.0.1:9092").split(",").map((s) => s.trim());
export const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379";
export const CLUSTER_NODES = (process.env.REDIS_CLUSTER_NODES || "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002")
  .split(",")
  .map((s) => s.trim());
export const PARTITIONS = 6;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A client of the 3-master Redis Cluster, with the options the library recommends. */
export function clusterClient(): Cluster {
  return seededCluster(
    {
      enableAutoPipelining: RECOMMENDED_IOREDIS_OPTIONS.enableAutoPipelining,
      redisOptions: {
        maxRetriesPerRequest: RECOMMENDED_IOREDIS_OPTIONS.maxRetriesPerRequest,
        connectTimeout: RECOMMENDED_IOREDIS_OPTIONS.connectTimeout,
      },
    },
    CLUSTER_NODES,
  );
}
/** A client of the standalone Redis, with the options the library recommends. */
export function standaloneClient(): Redis {
  const r = new Redis(REDIS_URL, RECOMMENDED_IOREDIS_OPTIONS);
  r.on("error", () => {});
  return r;
}

/** Resolves when `c` is ready; rejects after 5 s naming the stack command that starts it. */
export async function ready(c: Redis | Cluster, what: string): Promise<void> {
  if (c.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(
      () =>
        reject(
          new Error(`${what} not ready after 5 s (status ${c.status}): run npm run stack:up / npm run stack:cluster`),
        ),
      5000,
    );
    c.once("ready", () => {
      clearTimeout(t);
      resolve();
    });
  });
}
