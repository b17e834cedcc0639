/**
 * The ports of the dashboard backend, in a leaf: {@link ObserveContext} (what every route builder,
 * watcher and shared helper reads from) and the client type it names. Only types, so any layer may
 * import it; the composition root (`../context.ts`) builds the context from the adapters.
 */
import type { Cluster, Redis } from "ioredis";
import type { InboxKeySource, KeySource } from "../keys/source";
import type { MetricsSource } from "../metrics/source";
import type { SharedCache } from "./cache";

/** A standalone ioredis client or a Cluster: the inspector accepts both. */
export type RedisLike = Redis | Cluster;

/** Everything the dashboard's routes read from: one per process (or per test). */
export interface ObserveContext {
  mode: "embedded" | "real";
  metrics: MetricsSource;
  /** `null` when no Redis is configured (embedded mode). */
  redis: RedisLike | null;
  /** The Redis inspector, or (no Redis, in-memory stores given) the embedded mode's; `null` when neither. */
  inspector: KeySource | null;
  /** The PostgreSQL inbox's rows, read beside `inspector` (`INBOX_TABLE`); absent or `null` when not configured. */
  inbox?: InboxKeySource | null;
  /** Configured globs (`DEDUP_PREFIXES`). */
  prefixes: readonly string[];
  /** Shares whole answers (overview, capacity…) between concurrent viewers for a second. */
  answers: SharedCache;
}
