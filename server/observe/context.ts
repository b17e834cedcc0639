import { config } from "@/server/config";
import { ALL_DEDUP_KEYS_GLOB } from "@/names/keys";
import { appRegistry } from "@/server/registry";
import { SharedCache } from "./core/cache";
import type { ObserveContext, RedisLike } from "./core/ports";
import { registerProcessStart } from "./shared/events";
import { startLagMetrics } from "./watchers/lag-metrics";
import { KeyInspector } from "./keys/inspector";
import type { KeyInspectorOptions } from "./keys/inspector-options";
import { createInboxStore, memoryStores, type MemoryKeyStore } from "@/server/dedup-store";
import { MemoryInspector } from "./keys/memory-inspector";
import { PostgresInboxInspector } from "./keys/postgres-inbox-inspector";
import type { InboxKeySource } from "./keys/source";
import { LocalSource } from "./metrics/local";
import { PrometheusSource } from "./metrics/prometheus";
import type { MetricsSource } from "./metrics/source";
import { observeRedis } from "./redis/client";
import { startRedisCommandTime } from "./watchers/redis-command-time";
import { memoryWatchOf, registerMemoryLostGauge } from "./watchers/memory-watch";
import { registerDlqBacklogGauge } from "./watchers/dlq-backlog";

export type { ObserveContext };

/** Builds a context from explicit parts (tests, bench) — the routes use {@link observeContext}. */
export function createObserveContext(parts: {
  mode?: "embedded" | "real";
  metrics: MetricsSource;
  redis: RedisLike | null;
  prefixes?: readonly string[];
  inspector?: Partial<KeyInspectorOptions>;
  /** Without Redis: the in-memory stores to inspect (embedded mode). */
  memory?: () => readonly MemoryKeyStore[];
  /** The PostgreSQL inbox's rows, read beside the key store. */
  inbox?: InboxKeySource | null;
  answerTtlMs?: number;
}): ObserveContext {
  const prefixes = parts.prefixes ?? [ALL_DEDUP_KEYS_GLOB];
  return {
    mode: parts.mode ?? (parts.redis ? "real" : "embedded"),
    metrics: parts.metrics,
    redis: parts.redis,
    inspector: parts.redis
      ? new KeyInspector(parts.redis, { ...parts.inspector, prefixes })
      : parts.memory
        ? new MemoryInspector(parts.memory, { prefixes })
        : null,
    inbox: parts.inbox ?? null,
    prefixes,
    answers: new SharedCache({ ttlMs: parts.answerTtlMs ?? 1000, errorTtlMs: 500 }),
  };
}

type G = typeof globalThis & { __dedupHealthObserve?: ObserveContext };

/**
 * The process's context from `config()`: Prometheus when `PROMETHEUS_URL` is set, else the local
 * sampler over `appRegistry()`; the shared Redis client and a key inspector when Redis is set; the
 * PostgreSQL inbox's rows when an inbox table is configured (`INBOX_TABLE`). Kept on `globalThis`.
 */
export function observeContext(): ObserveContext {
  const g = globalThis as G;
  if (!g.__dedupHealthObserve) {
    const c = config();
    const runbookBase = c.RUNBOOK_BASE_URL;
    const metrics: MetricsSource = c.PROMETHEUS_URL
      ? new PrometheusSource(c.PROMETHEUS_URL, { runbookBase })
      : new LocalSource(appRegistry(), { runbookBase }).start();
    g.__dedupHealthObserve = createObserveContext({
      mode: c.mode,
      metrics,
      redis: observeRedis(),
      // Without Redis the demo's dedup keys live in this process: the same inspector surface reads them.
      memory: memoryStores,
      prefixes: c.DEDUP_PREFIXES,
      inspector: { exactMaxKeys: c.INSPECT_EXACT_MAX_KEYS },
      inbox: c.inbox ? inboxSource(c.inbox, c.DEDUP_PREFIXES) : null,
    });
  }
  return g.__dedupHealthObserve;
}

/** The inbox table's rows over a pool of their own (opened lazily: the first count connects). */
function inboxSource(target: { url: string; schema: string; table: string }, prefixes: readonly string[]) {
  const { repository } = createInboxStore(target);
  return new PostgresInboxInspector(repository.pool, repository.table, { prefixes });
}

/** Replaces the process's context (tests and the bench), or clears it with `null`. */
export function setObserveContext(ctx: ObserveContext | null): void {
  const g = globalThis as G;
  if (ctx) g.__dedupHealthObserve = ctx;
  else delete g.__dedupHealthObserve;
}

/**
 * Starts what the dashboard keeps warm in the background: the local metrics sampler (embedded
 * mode: history starts here, not at the first page view) and the first key inspection. Call once
 * from `instrumentation.ts` (nodejs runtime); harmless to call again.
 */
export function startObserve(): ObserveContext {
  const ctx = observeContext();
  ctx.inspector?.ensureFresh();
  ctx.inbox?.ensureFresh();
  const g = globalThis as typeof globalThis & { __dedupHealthCommandTime?: boolean };
  if (ctx.redis && !g.__dedupHealthCommandTime) {
    g.__dedupHealthCommandTime = true;
    startRedisCommandTime(ctx.redis, appRegistry());
  }
  // A lost dedup memory (Redis restarted empty, flushed, failed over) as a gauge, polled at each scrape.
  const watch = memoryWatchOf(ctx.redis, ctx.inspector);
  if (watch) registerMemoryLostGauge(appRegistry(), watch);
  // What waits in the DLQ topics for a re-drive, read from the topics (bounded, every 30 s at most).
  registerDlqBacklogGauge(appRegistry());
  // Consumer-group lag and rebalances on /api/metrics (real mode: Kafka configured), and the
  // process start (restarts are chart markers).
  startLagMetrics();
  registerProcessStart(appRegistry());
  return ctx;
}
