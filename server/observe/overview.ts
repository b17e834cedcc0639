import type {
  AlertInstance,
  AlertRule,
  HandlerKeys,
  OverviewHandler,
  OverviewResponse,
  RangeKey,
  ThresholdsView,
  Unavailable,
  Upstream,
} from "@/lib/api-types";
import { ALERTS, THRESHOLDS, TTL_POLICY } from "@/lib/thresholds";
import { WORKSHOP_SERVICE } from "@/lib/workshop-types";
import type { ObserveContext } from "./context";
import { errorText } from "./errors";
import { handlerPrefix } from "./glob";
import { declaredHandlers } from "./handler-registry";
import { buildScrapeCoverage } from "./scrape-coverage";
import { whenReady } from "./redis-client";
import type { QueryName } from "./metrics/queries";
import type { Sample } from "./metrics/source";

/** The thresholds block every response that draws charts carries. */
export function thresholdsView(): ThresholdsView {
  return {
    duplicateRatio: THRESHOLDS.duplicateRatio,
    duplicateRatioNormal: THRESHOLDS.duplicateRatioNormal,
    duplicateRatioFor: ALERTS.duplicateRate.for,
    errorRate: THRESHOLDS.errorRate,
    errorRateFor: ALERTS.redisErrors.for,
    checkP99Seconds: THRESHOLDS.checkP99Seconds,
    checkP99For: ALERTS.redisLatency.for,
    ttlPolicy: { ...TTL_POLICY },
  };
}

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
  if (ctx.metrics.kind === "local") return { status: "not-configured", detail: "embedded: metrics sampled from this process's registry" };
  return failures.length ? { status: "down", detail: failures[0]! } : { status: "up", detail: "prometheus answered" };
}

/**
 * Waits (≤ 500 ms) for the Redis client to be ready, so the first request after start-up does not
 * report a connection that is merely still opening as down. No-op without Redis or when ready.
 */
export async function settleRedis(ctx: ObserveContext): Promise<void> {
  // Only a connection still opening is waited for; one that is down ("reconnecting") is not.
  const s = ctx.redis?.status;
  if (ctx.redis && (s === "wait" || s === "connecting" || s === "connect")) await whenReady(ctx.redis, 500).catch(() => {});
}

/** Health of Redis as the inspector last saw it. */
export function redisUpstream(ctx: ObserveContext): Upstream {
  if (!ctx.redis || !ctx.inspector) return { status: "not-configured", detail: "embedded: no Redis configured (in-memory store)" };
  const s = ctx.inspector.current();
  if (ctx.redis.status !== "ready") return { status: "down", detail: s.error ?? `redis connection ${ctx.redis.status}` };
  if (s.error && !ctx.inspector.busy) return { status: "down", detail: s.error };
  return { status: "up", detail: ctx.redis.constructor.name === "Cluster" ? "redis cluster" : "redis" };
}

/** Inspector handlers, or unavailable (Redis not configured, down, or first scan not finished). */
export function inspectedHandlers(ctx: ObserveContext): Got<HandlerKeys[]> {
  if (!ctx.inspector) return { ok: false, detail: "redis: not configured (embedded mode keeps keys in process memory)" };
  ctx.inspector.ensureFresh();
  const s = ctx.inspector.current();
  // A workshop run's keys (`workshop:dedup:<scenario>:<runId>:…`) are no production handler.
  if (s.result) return { ok: true, value: s.result.handlers.filter((h) => h.service !== WORKSHOP_SERVICE) };
  return { ok: false, detail: s.error ? `redis: ${s.error}` : "redis: first key count still running" };
}

const key = (service: string, handler: string) => `${service}\u0000${handler}`;

/** Builds `GET /api/overview`. Shared between concurrent viewers for about a second. */
export function getOverview(ctx: ObserveContext, range: RangeKey): Promise<OverviewResponse> {
  return ctx.answers.get(`overview:${range}`, () => buildOverview(ctx, range));
}

async function buildOverview(ctx: ObserveContext, range: RangeKey): Promise<OverviewResponse> {
  const q = (name: QueryName) => got(ctx.metrics.instant(name));
  // Replicas Prometheus scrapes against the consumer groups' members (one query, one DescribeGroups).
  const coverage = buildScrapeCoverage(ctx.metrics, declaredHandlers()).catch((e: unknown) => unavailable(errorText(e)));
  const [ratio, processed, p50, p99, errors, alerts] = await Promise.all([
    settleRedis(ctx).then(() => q("duplicate_ratio")),
    q("processed_rate"),
    q("check_p50"),
    q("check_p99"),
    q("error_rate"),
    got(ctx.metrics.alerts()),
  ]);
  const keys = inspectedHandlers(ctx);
  const failures = [ratio, processed, p50, p99, errors, alerts].flatMap((g) => (g.ok ? [] : [g.detail]));

  // Handlers: from metrics, from Redis prefixes, and from the app's declarations.
  const rows = new Map<string, { service: string; handler: string; topics: Set<string>; ttlClass: OverviewHandler["ttlClass"] }>();
  const row = (service: string, handler: string) => {
    // Series of a workshop run that reached Prometheus before the workshop had its own registry.
    if (service === WORKSHOP_SERVICE) return { service, handler, topics: new Set<string>(), ttlClass: null as OverviewHandler["ttlClass"] };
    const k = key(service, handler);
    let r = rows.get(k);
    if (!r) rows.set(k, (r = { service, handler, topics: new Set(), ttlClass: null }));
    return r;
  };
  if (processed.ok) {
    for (const s of processed.value) {
      if (!s.labels.service || !s.labels.handler) continue;
      const r = row(s.labels.service, s.labels.handler);
      if (s.labels.topic) r.topics.add(s.labels.topic);
    }
  }
  if (keys.ok) for (const h of keys.value) row(h.service, h.handler);
  for (const d of declaredHandlers()) {
    const r = row(d.service, d.setup.handler);
    r.ttlClass = d.setup.ttlClass;
    if (d.topic) r.topics.add(d.topic);
  }

  const alertRules: AlertRule[] = alerts.ok ? alerts.value : [];
  const handlers: OverviewHandler[] = [...rows.values()]
    .sort((a, b) => a.service.localeCompare(b.service) || a.handler.localeCompare(b.handler))
    .map((r) => {
      const mine = (s: Sample) => s.labels.service === r.service && s.labels.handler === r.handler;
      const svc = (s: Sample) => s.labels.service === r.service;
      const byResult = { success: 0, error: 0, deduplicated: 0 };
      if (processed.ok) {
        for (const s of processed.value.filter(mine)) {
          const res = s.labels.result as keyof typeof byResult;
          if (res in byResult) byResult[res] += s.value ?? 0;
        }
      }
      const total = byResult.success + byResult.error + byResult.deduplicated;
      const ratios = ratio.ok ? ratio.value.filter(mine) : [];
      // One topic: the alert's own expression. Several, or no deduplicated series yet (Prometheus
      // yields no ratio where the numerator never moved): deduplicated / processed by result.
      const ratioValue = ratios.length === 1 ? ratios[0]!.value : total > 0 ? byResult.deduplicated / total : null;
      const errs: Record<string, number> = {};
      if (errors.ok) for (const s of errors.value.filter(svc)) errs[s.labels.reason ?? "unknown"] = (errs[s.labels.reason ?? "unknown"] ?? 0) + (s.value ?? 0);
      const keyRow = keys.ok ? keys.value.find((h) => h.prefix === handlerPrefix(r.service, r.handler) || (h.service === r.service && h.handler === r.handler)) : undefined;
      const instances: AlertInstance[] = alertRules.flatMap((a) =>
        a.instances.filter((i) => i.labels.service === r.service && (i.labels.handler === undefined || i.labels.handler === r.handler)),
      );
      const first = (g: { ok: true; value: Sample[] } | { ok: false; detail: string }) => (g.ok ? (g.value.find(svc)?.value ?? null) : null);
      return {
        service: r.service,
        handler: r.handler,
        topics: [...r.topics].sort(),
        ttlClass: r.ttlClass,
        duplicateRatio: ratio.ok && processed.ok ? { status: "ok" as const, value: ratioValue } : unavailable(ratio.ok ? (processed as { detail: string }).detail : ratio.detail),
        processedRate: processed.ok ? { status: "ok" as const, total, byResult } : unavailable(processed.detail),
        checkLatency: p50.ok && p99.ok ? { status: "ok" as const, p50Seconds: first(p50), p99Seconds: first(p99) } : unavailable(p50.ok ? (p99 as { detail: string }).detail : p50.detail),
        errorRates: errors.ok ? { status: "ok" as const, byReason: errs, total: Object.values(errs).reduce((a, b) => a + b, 0) } : unavailable(errors.detail),
        keys: !keys.ok
          ? unavailable(keys.detail)
          : {
              status: "ok" as const,
              count: keyRow?.keyCount ?? 0,
              exact: keyRow?.exact ?? ctx.inspector?.current().result?.mode === "exact",
              errorBound: keyRow?.errorBound ?? 0,
              noTtlCount: keyRow?.noTtlCount ?? 0,
              scanDone: ctx.inspector?.current().progress.done ?? false,
              settled: keyRow ? keyRow.keyCount - keyRow.byState.processing : 0,
              processing: keyRow?.byState.processing ?? 0,
              splitExact: keyRow?.byState.exact ?? true,
              leaseShare: keyRow?.leaseShare ?? null,
              countedAt: keyRow?.countedAt ?? (ctx.inspector?.current().result ? new Date(ctx.inspector.current().result!.finishedAt).toISOString() : null),
              recount: ctx.inspector?.recount() ?? null,
            },
        alerts: instances,
      };
    });

  return {
    generatedAt: new Date().toISOString(),
    mode: ctx.mode,
    range,
    source: ctx.metrics.kind,
    upstream: { prometheus: metricsUpstream(ctx, failures), redis: redisUpstream(ctx) },
    thresholds: thresholdsView(),
    handlers,
    alerts: alerts.ok ? { status: "ok", rules: alerts.value } : unavailable(alerts.detail),
    scrapeCoverage: await coverage,
  };
}
