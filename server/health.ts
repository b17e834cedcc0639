import { Kafka, logLevel } from "kafkajs";
import Redis from "ioredis";
import { config, type AppConfig } from "./config";

import type { ComponentHealth, Health } from "@/lib/health";

export type { ComponentHealth, Health };

/** Upper bound of one probe: the endpoint never hangs on a component that is down. */
export const PROBE_TIMEOUT_MS = 2000;

class ProbeTimeout extends Error {}

async function timed(probe: () => Promise<string>): Promise<ComponentHealth> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
      }),
    ]);
    return { status: "up", latencyMs: Math.round((performance.now() - t0) * 10) / 10, detail };
  } catch (e) {
    return { status: "down", latencyMs: null, detail: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(timer);
  }
}

function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return `${u.hostname}:${u.port || "6379"}`;
  } catch {
    return "configured URL";
  }
}

async function probeRedis(c: AppConfig): Promise<ComponentHealth> {
  if (c.REDIS_CLUSTER_NODES) {
    const nodes = c.REDIS_CLUSTER_NODES;
    return timed(async () => {
      const first = nodes[0] ?? "";
      const [host, port] = first.split(":");
      const r = new Redis({ host, port: Number(port), lazyConnect: true, connectTimeout: 1500, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
      try {
        await r.connect();
        const info = await r.cluster("INFO");
        const state = /cluster_state:(\w+)/.exec(String(info))?.[1] ?? "unknown";
        if (state !== "ok") throw new Error(`cluster_state:${state}`);
        return `cluster of ${nodes.length} seed nodes, state ok`;
      } finally {
        r.disconnect();
      }
    });
  }
  if (!c.REDIS_URL) return { status: "not-configured", latencyMs: null, detail: "REDIS_URL is not set: the embedded in-memory store is used" };
  const url = c.REDIS_URL;
  return timed(async () => {
    const r = new Redis(url, { lazyConnect: true, connectTimeout: 1500, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    r.on("error", () => {});
    try {
      await r.connect();
      const pong = await r.ping();
      return `${redacted(url)} answered ${pong}`;
    } finally {
      r.disconnect();
    }
  });
}

async function probeKafka(c: AppConfig): Promise<ComponentHealth> {
  if (!c.KAFKA_BROKERS) return { status: "not-configured", latencyMs: null, detail: "KAFKA_BROKERS is not set: the embedded in-memory pub/sub is used" };
  const kafka = new Kafka({
    clientId: "dedup-health-health",
    brokers: c.KAFKA_BROKERS,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1500,
    requestTimeout: 1500,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  const result = await timed(async () => {
    await admin.connect();
    const d = await admin.describeCluster();
    return `${d.brokers.length} broker(s), controller ${d.controller ?? "unknown"}`;
  });
  void admin.disconnect().catch(() => {});
  return result;
}

async function probePrometheus(c: AppConfig): Promise<ComponentHealth> {
  if (!c.PROMETHEUS_URL) return { status: "not-configured", latencyMs: null, detail: "PROMETHEUS_URL is not set: metrics are sampled in-process" };
  const base = c.PROMETHEUS_URL.replace(/\/+$/, "");
  return timed(async () => {
    const res = await fetch(`${base}/-/ready`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), cache: "no-store" });
    if (!res.ok) throw new Error(`/-/ready answered ${res.status}`);
    return "ready";
  });
}

/** Probes Redis, Kafka and Prometheus in parallel, each bounded by {@link PROBE_TIMEOUT_MS}. */
export async function health(c: AppConfig = config()): Promise<Health> {
  const [redis, kafka, prometheus] = await Promise.all([probeRedis(c), probeKafka(c), probePrometheus(c)]);
  return { mode: c.mode, components: { redis, kafka, prometheus } };
}
