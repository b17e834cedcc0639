/**
 * Where the demo and the workshop run: embedded (in-memory broker, in-memory dedup store,
 * in-process side-effect store) or real (Kafka, Redis, PostgreSQL), chosen from the configuration.
 * One code path above this module.
 */
import { Cluster, Redis } from "ioredis";
import type { Registry } from "prom-client";
import { MemoryRepository } from "@/server/dedup/memory-repository";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository } from "@/server/dedup/redis-repository";
import type { DedupRepository } from "@/server/dedup/repository";
import type { AppConfig } from "@/server/config";
import type { ScenarioEnv } from "./scenario-context";
import { MemorySideEffectStore, PostgresSideEffectStore, type PushObserver, type SideEffectStore } from "./side-effects";
import { KafkaTransport, MemoryTransport, type Transport } from "./transport";

/** A standalone ioredis client or a Cluster. */
export type RedisClient = Redis | Cluster;

/** Creates the consumer's Redis client with the library's recommended options (fails fast, reconnects in the background). */
export function createDedupRedis(target: { url?: string; clusterNodes?: readonly string[] }, name = "dedup-health-consumer"): RedisClient {
  // Reconnect every ≤ 150 ms while Redis is down: with maxRetriesPerRequest 1 a queued command then
  // fails within two attempts (≤ 300 ms, "redis_conn") before the Deduplicator's check timeout
  // (500 ms) fires. A longer backoff made a stopped Redis read as "redis_timeout" (slow), not down.
  const common = { ...RECOMMENDED_IOREDIS_OPTIONS, connectionName: name, retryStrategy: (n: number) => Math.min(50 * n, 150) };
  let c: RedisClient;
  if (target.clusterNodes && target.clusterNodes.length > 0) {
    c = new Cluster(
      target.clusterNodes.map((hp) => ({ host: hp.slice(0, hp.lastIndexOf(":")), port: Number(hp.slice(hp.lastIndexOf(":") + 1)) })),
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

/** What an environment is built from. */
export interface EnvOptions {
  kafkaBrokers?: readonly string[];
  redis?: RedisClient;
  databaseUrl?: string;
  /** Key service for workshop runs. @default "workshop" */
  service?: string;
  registry?: Registry;
  partitions?: number;
  /**
   * Also told of every push of a workshop run (the app counts them in `demo_side_effects_total` /
   * `demo_duplicate_side_effects_total` / `demo_push_resends_absorbed_total` with the scenario as
   * `handler`, on the workshop's own registry: never on `/api/metrics`). @default none
   */
  observePush?: PushObserver;
}

/** A scenario environment over the given services (embedded pieces for the missing ones). */
export function scenarioEnv(o: EnvOptions = {}): ScenarioEnv & { close(): Promise<void> } {
  const transport: Transport = o.kafkaBrokers && o.kafkaBrokers.length > 0 ? new KafkaTransport(o.kafkaBrokers) : new MemoryTransport();
  const redis = o.redis;
  const shared = redis ? new RedisRepository(redis) : null;
  return {
    transport,
    service: o.service ?? "workshop",
    registry: o.registry,
    partitions: o.partitions,
    sharedRepository: (): DedupRepository => shared ?? new MemoryRepository(),
    localRepository: (): DedupRepository => new MemoryRepository(),
    sideEffectStore: (scope: string, runObserver: PushObserver): SideEffectStore => {
      const observe: PushObserver = (h, id, r) => {
        runObserver(h, id, r);
        o.observePush?.(h, id, r);
      };
      return o.databaseUrl ? new PostgresSideEffectStore({ connectionString: o.databaseUrl, schema: scope, tablePrefix: "ws", observe, poolSize: 8 }) : new MemorySideEffectStore(observe);
    },
    deleteKeys: async (prefix: string) => {
      if (redis) await deleteKeysByPrefix(redis, prefix);
    },
    close: async () => {
      await transport.close();
    },
  };
}

/** The services configured in `c` (real where set, embedded otherwise). */
export function envOptionsFromConfig(c: AppConfig): Omit<EnvOptions, "service" | "registry"> & { redisTarget?: { url?: string; clusterNodes?: readonly string[] } } {
  return {
    kafkaBrokers: c.KAFKA_BROKERS,
    databaseUrl: c.DATABASE_URL,
    redisTarget: c.REDIS_URL || c.REDIS_CLUSTER_NODES ? { url: c.REDIS_URL, clusterNodes: c.REDIS_CLUSTER_NODES } : undefined,
  };
}
