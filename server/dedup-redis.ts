/**
 * The consumers' Redis client (the dedup store of the demo, the workshop and the workers), with the
 * library's recommended options, and the clean-up of a key prefix. The dashboard has its own client
 * (server/observe/redis/client.ts).
 */
import { Cluster, Redis } from "ioredis";
import { RECOMMENDED_IOREDIS_OPTIONS } from "@/server/dedup";

/** A standalone ioredis client or a Cluster. */
export type RedisClient = Redis | Cluster;

/** Creates the consumer's Redis client with the library's recommended options (fails fast, reconnects in the background). */
export function createDedupRedis(
  target: { url?: string; clusterNodes?: readonly string[] },
  name = "dedup-health-consumer",
): RedisClient {
  // Reconnect every ≤ 150 ms while Redis is down: with maxRetriesPerRequest 1 a queued command then
  // fails within two attempts (≤ 300 ms, "redis_conn") before the Deduplicator's check timeout
  // (500 ms) fires. A longer backoff made a stopped Redis read as "redis_timeout" (slow), not down.
  const common = {
    ...RECOMMENDED_IOREDIS_OPTIONS,
    connectionName: name,
    retryStrategy: (n: number) => Math.min(50 * n, 150),
  };
  let c: RedisClient;
  if (target.clusterNodes && target.clusterNodes.length > 0) {
    c = new Cluster(
      target.clusterNodes.map((hp) => ({
        host: hp.slice(0, hp.lastIndexOf(":")),
        port: Number(hp.slice(hp.lastIndexOf(":") + 1)),
      })),
      { redisOptions: common, enableAutoPipelining: true },
    );
  } else if (target.url) {
    c = new Redis(target.url, common);
  } else {
    throw new RangeError("createDedupRedis: give REDIS_URL or REDIS_CLUSTER_NODES");
  }
  c.on("error", () => undefined); // failures surface as command errors (deduplication_errors_total); an unhandled 'error' event would crash
  return c;
}

/** Deletes every key matching `<prefix>:*` (SCAN + UNLINK; every master of a Cluster). Bounded to 100k keys. */
export async function deleteKeysByPrefix(client: RedisClient, prefix: string): Promise<number> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes("master") : [client];
  let n = 0;
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      for (const k of keys) n += await node.unlink(k);
    } while (cursor !== "0" && n < 100_000);
  }
  return n;
}
