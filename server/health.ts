import { Kafka, logLevel, type Admin } from "kafkajs";
import { Cluster } from "ioredis";
import { config, type AppConfig } from "./config";
import { observeRedis, whenReady, type RedisLike } from "./observe/redis/client";
import { failureKind, redact } from "./redact";
import { withTimeout } from "./dedup";
import { prometheusEndpoint } from "./observe/metrics/prometheus";

import type { ComponentHealth, Health } from "@/lib/health";

export type { ComponentHealth, Health };

/** Upper bound of one probe: the endpoint never hangs on a component that is down. */
export const PROBE_TIMEOUT_MS = 2000;
/** How long one answer is shared by every caller of `/api/health` (bounded cost per caller). */
export const HEALTH_CACHE_MS = 2000;

class ProbeTimeout extends Error {}

async function timed(c: AppConfig, probe: () => Promise<string>): Promise<ComponentHealth> {
  const t0 = performance.now();
  try {
    const detail = await withTimeout(
      probe(),
      PROBE_TIMEOUT_MS,
      () => new ProbeTimeout(`no answer within ${PROBE_TIMEOUT_MS} ms`),
    );
    return { status: "up", latencyMs: Math.round((performance.now() - t0) * 10) / 10, detail };
  } catch (e) {
    // The kind of failure, never the address (server/redact.ts).
    const detail =
      e instanceof ProbeTimeout
        ? e.message
        : `${failureKind(e)}: ${redact(e instanceof Error ? e.message : String(e), c)}`;
    return { status: "down", latencyMs: null, detail };
  }
}

async function probeRedis(c: AppConfig, redis: RedisLike | null): Promise<ComponentHealth> {
  if (!redis)
    return {
      status: "not-configured",
      latencyMs: null,
      detail: "REDIS_URL is not set: the embedded in-memory store is used",
    };
  return timed(c, async () => {
    await whenReady(redis, 1500);
    if (redis instanceof Cluster) {
      const info = await redis.cluster("INFO");
      const state = /cluster_state:(\w+)/.exec(String(info))?.[1] ?? "unknown";
      if (state !== "ok") throw new Error(`cluster_state:${state}`);
      return `cluster of ${redis.nodes("master").length} masters, state ok`;
    }
    return `answered ${await redis.ping()}`;
  });
}

type G = typeof globalThis & { __dedupHealthKafkaAdmin?: { admin: Admin; connected: Promise<void> | null } };

/** The long-lived admin client of the Kafka probe (one per process, reconnected after a failure). */
function kafkaAdmin(brokers: readonly string[]): { admin: Admin; connected: Promise<void> | null } {
  const g = globalThis as G;
  g.__dedupHealthKafkaAdmin ??= {
    admin: new Kafka({
      clientId: "dedup-health-health",
      brokers: [...brokers],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1500,
      requestTimeout: 1500,
      retry: { retries: 0 },
    }).admin(),
    connected: null,
  };
  return g.__dedupHealthKafkaAdmin;
}

async function probeKafka(c: AppConfig): Promise<ComponentHealth> {
  if (!c.KAFKA_BROKERS)
    return {
      status: "not-configured",
      latencyMs: null,
      detail: "KAFKA_BROKERS is not set: the embedded in-memory pub/sub is used",
    };
  const k = kafkaAdmin(c.KAFKA_BROKERS);
  const result = await timed(c, async () => {
    k.connected ??= k.admin.connect();
    await k.connected;
    const d = await k.admin.describeCluster();
    return `${d.brokers.length} broker(s) answered`;
  });
  if (result.status === "down") {
    // Reconnect on the next probe (at most one per HEALTH_CACHE_MS).
    const failed = k.connected;
    k.connected = null;
    void failed?.then(() => k.admin.disconnect()).catch(() => {});
  }
  return result;
}

async function probePrometheus(c: AppConfig): Promise<ComponentHealth> {
  if (!c.PROMETHEUS_URL)
    return {
      status: "not-configured",
      latencyMs: null,
      detail: "PROMETHEUS_URL is not set: metrics are sampled in-process",
    };
  const { base, headers } = prometheusEndpoint(c.PROMETHEUS_URL);
  return timed(c, async () => {
    const res = await fetch(`${base}/-/ready`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      cache: "no-store",
      headers,
    });
    if (!res.ok) throw new Error(`/-/ready answered ${res.status}`);
    return "ready";
  });
}

/**
 * Probes Redis (the shared observe client), Kafka (one long-lived admin client) and Prometheus in
 * parallel, each bounded by {@link PROBE_TIMEOUT_MS}. No connection is opened per call.
 */
export async function health(c: AppConfig = config(), redis: RedisLike | null = observeRedis()): Promise<Health> {
  const [r, kafka, prometheus] = await Promise.all([probeRedis(c, redis), probeKafka(c), probePrometheus(c)]);
  return { mode: c.mode, components: { redis: r, kafka, prometheus } };
}

type HG = typeof globalThis & { __dedupHealthAnswer?: { at: number; value: Promise<Health> } };

/**
 * {@link health} shared by every caller for {@link HEALTH_CACHE_MS}: concurrent calls wait for the
 * one probe in flight (singleflight), later calls within the window get its answer.
 */
export function cachedHealth(now = Date.now()): Promise<Health> {
  const g = globalThis as HG;
  const hit = g.__dedupHealthAnswer;
  if (hit && now - hit.at < HEALTH_CACHE_MS) return hit.value;
  const value = health();
  g.__dedupHealthAnswer = { at: now, value };
  // A probe that outlives the window still serves its waiters; the next caller starts a new one.
  void value.then(
    () => {
      if (g.__dedupHealthAnswer?.value === value) g.__dedupHealthAnswer.at = Date.now();
    },
    () => {
      if (g.__dedupHealthAnswer?.value === value) delete g.__dedupHealthAnswer;
    },
  );
  return value;
}
