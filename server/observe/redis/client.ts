import { Cluster, Redis } from "ioredis";
import { config } from "@/server/config";
import type { RedisLike } from "../core/ports";

export type { RedisLike };

/** Timeouts and behaviour of the dashboard's Redis client. */
export interface ObserveRedisOptions {
  /** Time allowed to open a connection. @default 1000 */
  connectTimeoutMs: number;
  /** Time allowed for one command before it fails. @default 2000 */
  commandTimeoutMs: number;
  /** Longest wait between reconnect attempts while Redis is down. @default 2000 */
  maxReconnectDelayMs: number;
}

/** Defaults of {@link ObserveRedisOptions}. */
export const DEFAULT_OBSERVE_REDIS_OPTIONS: ObserveRedisOptions = {
  connectTimeoutMs: 1000,
  commandTimeoutMs: 2000,
  maxReconnectDelayMs: 2000,
};

/**
 * Creates a client that never hangs a request: commands fail at once while disconnected
 * (`enableOfflineQueue: false`, no per-request retries), each command is bounded by
 * `commandTimeoutMs`, and reconnects go on in the background. Auto-pipelining batches the
 * concurrent single-key commands of the key browser.
 */
export function createObserveRedis(
  target: { url?: string; clusterNodes?: readonly string[] },
  opts: Partial<ObserveRedisOptions> = {},
): RedisLike {
  const o = { ...DEFAULT_OBSERVE_REDIS_OPTIONS, ...opts };
  for (const k of ["connectTimeoutMs", "commandTimeoutMs", "maxReconnectDelayMs"] as const) {
    if (!Number.isFinite(o[k]) || o[k] < 1 || o[k] > 60_000)
      throw new RangeError(`${k}: expected 1..60000 ms, got ${o[k]}`);
  }
  const retry = (times: number) => Math.min(50 * 2 ** Math.min(times, 10), o.maxReconnectDelayMs);
  const common = {
    connectTimeout: o.connectTimeoutMs,
    commandTimeout: o.commandTimeoutMs,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: true,
    connectionName: "dedup-health-observe",
  };
  if (target.clusterNodes && target.clusterNodes.length > 0) {
    const nodes = target.clusterNodes.map((hp) => {
      const i = hp.lastIndexOf(":");
      return { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) };
    });
    const c = new Cluster(nodes, {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: retry,
      slotsRefreshTimeout: o.connectTimeoutMs,
      redisOptions: { ...common, maxRetriesPerRequest: 0 },
    });
    c.on("error", () => {}); // state is read from `status`; an unhandled 'error' event would crash the process
    return c;
  }
  if (!target.url) throw new RangeError("target: expected url or clusterNodes");
  const r = new Redis(target.url, { ...common, enableOfflineQueue: false, retryStrategy: retry });
  r.on("error", () => {});
  return r;
}

/**
 * The app's shared Redis client for observation (inspector, key browser, health), from
 * `REDIS_CLUSTER_NODES` or `REDIS_URL`; `null` when neither is set (embedded mode). Kept on
 * `globalThis` so Next.js's several module copies share one connection.
 */
export function observeRedis(): RedisLike | null {
  const g = globalThis as typeof globalThis & { __dedupHealthObserveRedis?: RedisLike | null };
  if (g.__dedupHealthObserveRedis === undefined) {
    const c = config();
    g.__dedupHealthObserveRedis =
      c.REDIS_CLUSTER_NODES || c.REDIS_URL
        ? createObserveRedis({ url: c.REDIS_URL, clusterNodes: c.REDIS_CLUSTER_NODES })
        : null;
  }
  return g.__dedupHealthObserveRedis;
}

/**
 * Resolves once `client` is ready, or throws after `timeoutMs`. Commands sent before that would
 * fail at once (no offline queue), so callers that may run right after start-up wait here first.
 */
export async function whenReady(client: RedisLike, timeoutMs = 1000): Promise<void> {
  if (client.status === "ready") return;
  if (client.status === "wait") void client.connect().catch(() => {});
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => {
      cleanup();
      reject(new Error(`redis not ready after ${timeoutMs} ms (status ${client.status})`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(t);
      client.off("ready", onReady);
    };
    client.on("ready", onReady);
  });
}

/** The masters of a Cluster (each scanned separately), or the standalone client itself. */
export function masters(client: RedisLike): Redis[] {
  return client instanceof Cluster ? client.nodes("master") : [client];
}

/** `host:port` of one node, as the composite cursors name it. */
export function nodeId(node: Redis): string {
  return `${node.options.host ?? "127.0.0.1"}:${node.options.port ?? 6379}`;
}
