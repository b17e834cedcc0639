/**
 * dedup-health's consumer middleware library: a Watermill-style router and middleware stack with a
 * Deduplicator on Redis that loses nothing (spec §2, §4, §7, §10). Framework-free: imports only
 * `node:*`, its own files, `names/` and prom-client (metrics); no Redis client (see `DedupRedisClient`).
 * See docs/LIBRARY.md.
 *
 * Its names (metrics, label values, metadata keys, key prefix, TTL policy, stack order) live in
 * `names/dedup.ts`, which imports nothing: the dashboard reads them there, never through this index.
 */
export * from "./message";
export * from "./batch-run";
export * from "./errors";
export * from "./pubsub";
export * from "./router";
export * from "./repository";
export * from "../../names/dedup";
export * from "./correlation-id";
export * from "./recoverer";
export * from "./poison-queue";
export * from "./retry";
export * from "./timeout";
export * from "./duplicator";
export * from "./deduplicator";
export * from "./hot-keys";
export * from "./hot-keys-board";
export * from "./hot-keys-gauge";
export * from "./failure-mode";
export * from "./memory-repository";
export * from "./faulty-repository";
export * from "./redis-repository";
export * from "./redis-scripts";
export * from "./cluster-slot";
export * from "./metrics";
export * from "./handler-time-histogram";
export * from "./handler-timer";
export * from "./stack";
export * from "./handler-info";
export * from "./lint";
export * from "./run-once";
