/**
 * The helpers every observe read shares: an upstream read kept as a value (`got`), the
 * `unavailable` block, the health of Prometheus and Redis as a request sees them, and the key
 * inspector's handlers. Overview, series, capacity, the key browser and the lint import them from
 * here, so no response builder imports another.
 */
import type { Unavailable, Upstream } from "@/lib/api/common";
import type { HandlerKeys } from "@/lib/api/handlers";
import { WORKSHOP_SERVICE } from "@/names/product";
import type { ObserveContext } from "../core/ports";
import { errorText } from "../core/errors";
import { whenReady } from "../redis/client";

/** Result of one upstream read: the value, or why it is unavailable. */
export type Got<T> = { ok: true; value: T } | { ok: false; detail: string };

/** Runs `p` and keeps its error as a value (the rest of the response still answers). */
export async function got<T>(p: Promise<T>): Promise<Got<T>> {
  try {
    return { ok: true, value: await p };
  } catch (e) {
    return { ok: false, detail: errorText(e) };
  }
}

/** `{ status: "unavailable", detail }`. */
export function unavailable(detail: string): Unavailable {
  return { status: "unavailable", detail };
}

/** Health of the metrics upstream as seen by this request. */
export function metricsUpstream(ctx: ObserveContext, failures: string[]): Upstream {
  if (ctx.metrics.kind === "local")
    return { status: "not-configured", detail: "embedded: metrics sampled from this process's registry" };
  return failures.length ? { status: "down", detail: failures[0]! } : { status: "up", detail: "prometheus answered" };
}

/**
 * Waits (≤ 500 ms) for the Redis client to be ready, so the first request after start-up does not
 * report a connection that is merely still opening as down. No-op without Redis or when ready.
 */
export async function settleRedis(ctx: ObserveContext): Promise<void> {
  // Only a connection still opening is waited for; one that is down ("reconnecting") is not.
  const s = ctx.redis?.status;
  if (ctx.redis && (s === "wait" || s === "connecting" || s === "connect"))
    await whenReady(ctx.redis, 500).catch(() => {});
}

/** Health of the dedup store (Redis) as the inspector last saw it; `not-configured` in embedded mode. */
export function storeUpstream(ctx: ObserveContext): Upstream {
  if (!ctx.redis || !ctx.inspector)
    return { status: "not-configured", detail: "embedded: no Redis configured (in-memory store)" };
  const s = ctx.inspector.current();
  if (ctx.redis.status !== "ready")
    return { status: "down", detail: s.error ?? `redis connection ${ctx.redis.status}` };
  if (s.error && !ctx.inspector.busy) return { status: "down", detail: s.error };
  return { status: "up", detail: ctx.redis.constructor.name === "Cluster" ? "redis cluster" : "redis" };
}

/** Inspector handlers, or unavailable (Redis not configured, down, or first scan not finished). */
export function inspectedHandlers(ctx: ObserveContext): Got<HandlerKeys[]> {
  if (!ctx.inspector)
    return { ok: false, detail: "redis: not configured (embedded mode keeps keys in process memory)" };
  ctx.inspector.ensureFresh();
  const s = ctx.inspector.current();
  // A workshop run's keys (`workshop:dedup:<scenario>:<runId>:…`) are no production handler.
  if (s.result) return { ok: true, value: s.result.handlers.filter((h) => h.service !== WORKSHOP_SERVICE) };
  return { ok: false, detail: s.error ? `redis: ${s.error}` : "redis: first key count still running" };
}
