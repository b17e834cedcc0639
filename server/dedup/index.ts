/**
 * dedup-health's consumer middleware library: a Watermill-style router and middleware stack with a
 * Deduplicator on Redis that loses nothing (spec §2, §4, §7, §10). Framework-free: imports only
 * `node:*`, its own files, `names/` and prom-client (metrics); no Redis client (see `DedupRedisClient`).
 * See docs/LIBRARY.md.
 *
 * Its names (metrics, label values, metadata keys, key prefix, TTL policy, stack order) live in
 * `names/` (dedup.ts, dlq.ts, keys.ts, stack.ts, contract.ts, buckets.ts), which imports nothing: the dashboard reads them there, never through this index.
 */
export * from "./message";
export * from "./router/batch-run";
export * from "./errors";
export * from "./pubsub";
export * from "./router/router";
export * from "./repository/repository";
export * from "./repository/stored-value";
export * from "./repository/store-call";
export * from "../../names/dedup";
export * from "../../names/dlq";
export * from "../../names/keys";
export * from "../../names/stack";
export * from "../../names/contract";
export * from "../../names/buckets";
export * from "./middleware/correlation-id";
export * from "./middleware/recoverer";
export * from "./middleware/poison-queue";
export * from "./middleware/retry";
export * from "./middleware/timeout";
export * from "./middleware/duplicator";
export * from "./deduplicator/deduplicator";
export * from "./deduplicator/deduplicator-options";
export * from "./deduplicator/payload-fingerprint";
export * from "./metrics/hot-key-sketch";
export * from "./metrics/hot-keys";
export * from "./metrics/hot-keys-board";
export * from "./metrics/hot-keys-gauge";
export * from "./repository/failure-mode";
export * from "./repository/memory-repository";
export * from "./repository/faulty-repository";
export * from "./repository/redis-repository";
export * from "./repository/redis-scripts";
export * from "./repository/cluster-slot";
export * from "./metrics/metrics";
export * from "./metrics/recorder";
export * from "./metrics/handler-time-histogram";
export * from "./middleware/handler-timer";
export * from "./stack";
export * from "./deduplicator/handler-info";
export * from "./lint";
export * from "./repository/run-once";
export * from "./repository/inbox-sql";
export * from "./repository/postgres-inbox-repository";
export * from "./deduplicator/inbox";
