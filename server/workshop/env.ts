/**
 * Where the workshop runs (and which services the demo finds): embedded (in-memory broker,
 * in-memory dedup store, in-process side-effect store) or real (Kafka, Redis, PostgreSQL), chosen
 * from the configuration. One code path above this module.
 */
import type { Registry } from "prom-client";
import { MemoryRepository, type DedupRepository } from "@/server/dedup";
import type { AppConfig } from "@/server/config";
import { deleteKeysByPrefix, type RedisClient } from "@/server/dedup-redis";
import { repositoryFor } from "@/server/dedup-store";
import type { ScenarioEnv } from "./scenario-context";
import { MemorySideEffectStore, type PushObserver, type SideEffectStore } from "@/server/notification/side-effects";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import { KafkaTransport, MemoryTransport, type Transport } from "@/server/transport";

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
  const transport: Transport =
    o.kafkaBrokers && o.kafkaBrokers.length > 0 ? new KafkaTransport(o.kafkaBrokers) : new MemoryTransport();
  const redis = o.redis;
  const shared = redis ? repositoryFor(redis) : null;
  return {
    transport,
    service: o.service ?? "workshop",
    registry: o.registry,
    partitions: o.partitions,
    databaseUrl: o.databaseUrl,
    sharedRepository: (): DedupRepository => shared ?? repositoryFor(undefined),
    localRepository: (): DedupRepository => new MemoryRepository(),
    sideEffectStore: (scope: string, runObserver: PushObserver): SideEffectStore => {
      const observe: PushObserver = (h, id, r) => {
        runObserver(h, id, r);
        o.observePush?.(h, id, r);
      };
      return o.databaseUrl
        ? new PostgresSideEffectStore({
            connectionString: o.databaseUrl,
            schema: scope,
            tablePrefix: "ws",
            observe,
            poolSize: 8,
          })
        : new MemorySideEffectStore(observe);
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
export function envOptionsFromConfig(
  c: AppConfig,
): Omit<EnvOptions, "service" | "registry"> & { redisTarget?: { url?: string; clusterNodes?: readonly string[] } } {
  return {
    kafkaBrokers: c.KAFKA_BROKERS,
    databaseUrl: c.DATABASE_URL,
    redisTarget:
      c.REDIS_URL || c.REDIS_CLUSTER_NODES ? { url: c.REDIS_URL, clusterNodes: c.REDIS_CLUSTER_NODES } : undefined,
  };
}
