/**
 * Which replicas form one fleet: those configured to watch the same things — the same dedup store,
 * Kafka cluster, consumer topics, key prefixes and demo service. They elect one leader and share
 * their saved baselines; a dashboard watching other stores on the same database is another fleet,
 * with a lock and baselines of its own. Derived from the configuration, so replicas of one
 * deployment (same environment) agree without a setting of their own.
 */
import { createHash } from "node:crypto";
import type { AppConfig } from "@/server/config";

/** What makes two replicas one fleet. */
export type FleetConfig = Pick<
  AppConfig,
  | "REDIS_URL"
  | "REDIS_CLUSTER_NODES"
  | "KAFKA_BROKERS"
  | "CONSUMER_TOPICS"
  | "DEDUP_PREFIXES"
  | "SERVICE_NAME"
  | "DEMO_TOPIC"
>;

/** The fleet's id: 16 hex digits of a hash of {@link FleetConfig} (lists sorted; no setting is kept in clear). */
export function fleetId(c: Partial<FleetConfig>): string {
  const sorted = (l: readonly string[] | undefined) => [...(l ?? [])].sort();
  const parts = [
    c.REDIS_URL ?? "",
    sorted(c.REDIS_CLUSTER_NODES),
    sorted(c.KAFKA_BROKERS),
    sorted(c.CONSUMER_TOPICS),
    sorted(c.DEDUP_PREFIXES),
    c.SERVICE_NAME ?? "",
    c.DEMO_TOPIC ?? "",
  ];
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
}

/** The fleet's advisory lock key: the id's first 31 bits (the second key of `pg_try_advisory_lock(int, int)`). */
export function fleetLockKey(id: string): number {
  return Number.parseInt(id.slice(0, 8), 16) & 0x7fffffff;
}
