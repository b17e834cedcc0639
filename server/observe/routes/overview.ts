/**
 * `GET /api/overview`: one row per handler (metrics, Redis keys, declarations), the upstreams'
 * health, the alerts and the scrape coverage. Its shared helpers live in ../shared/upstream, its rows in ./overview-rows.
 */
import { alertRulesOrLastKnown, alertsField, alertsUnknown } from "../shared/alerts-field";
import type { RangeKey } from "@/lib/api/common";
import type { OverviewHandler, OverviewResponse, ThresholdsView } from "@/lib/api/overview";
import { ALERTS, THRESHOLDS } from "@/lib/thresholds";
import { RATE_WINDOW_MS } from "@/lib/alert-exprs";
import { TTL_POLICY } from "@/names/keys";
import type { ObserveContext } from "../core/ports";
import { errorText } from "../core/errors";
import { declaredHandlers } from "../core/handler-registry";
import { memoryWatchOf } from "../watchers/memory-watch";
import { dlqBacklog } from "../watchers/dlq-backlog";
import { buildScrapeCoverage } from "../shared/scrape-coverage";
import { withScrape } from "../shared/overview-signals";
import { readSignals } from "../shared/signals";
import type { QueryName } from "@/lib/named-queries";
import { got, inspectedHandlers, metricsUpstream, storeUpstream, settleRedis, unavailable } from "../shared/upstream";
import { handlerRow, handlerRows, NOW_QUERIES, type Reads } from "./overview-rows";

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

/** Builds `GET /api/overview`. Shared between concurrent viewers for about a second. */
export function getOverview(ctx: ObserveContext, range: RangeKey): Promise<OverviewResponse> {
  return ctx.answers.get(`overview:${range}`, () => buildOverview(ctx, range));
}

/**
 * This process's start while the 5-min window still reaches before it (`null` after): the window's
 * figures and the alerts then include what the metrics store kept from before the start.
 */
export function windowBeforeStart(nowMs: number, uptimeSeconds: number): OverviewHandler["beforeStart"] {
  const windowSeconds = RATE_WINDOW_MS / 1000;
  if (uptimeSeconds >= windowSeconds) return null;
  return { appStartedAt: new Date(nowMs - uptimeSeconds * 1000).toISOString(), windowSeconds };
}

async function buildOverview(ctx: ObserveContext, range: RangeKey): Promise<OverviewResponse> {
  // Every figure of one answer reads the same instant of the store: queries issued a moment apart,
  // or answered from caches filled at different moments, can pair a fault's first errors with the
  // quiet of the scrape before it and call the fault over as it begins.
  const at = Date.now() / 1000;
  const q = (name: QueryName) => got(ctx.metrics.instant(name, at));
  // Replicas Prometheus scrapes against the consumer groups' members (one query, one DescribeGroups).
  const coverage = buildScrapeCoverage(ctx.metrics, declaredHandlers()).catch((e: unknown) =>
    unavailable(errorText(e)),
  );
  // Redis' identity and the last count, for a lost dedup memory and "stale since" (bounded, never throws).
  const watch = memoryWatchOf(ctx.redis, ctx.inspector);
  const watched = watch?.poll();
  const backlog = dlqBacklog();
  // What each service exports and whether it is scraped, from the source itself (never from this
  // process's registry), read beside the figures; the services shown are known once the rows are.
  let showing: (services: string[]) => void = () => undefined;
  const signalsRead = readSignals(ctx.metrics, at, new Promise<string[]>((resolve) => (showing = resolve)));
  const [ratio, processed, p50, p99, errors, alerts] = await Promise.all([
    settleRedis(ctx).then(() => q("duplicate_ratio")),
    q("processed_rate"),
    q("check_p50"),
    q("check_p99"),
    q("error_rate"),
    got(ctx.metrics.alerts()),
  ]);
  const [runtime, redisTime, unchecked, ...now] = await Promise.all([
    q("runtime_latency"),
    ctx.mode === "real" ? q("redis_command_time") : Promise.resolve(null),
    q("unchecked"),
    ...NOW_QUERIES.map(q),
  ]);
  const [dlq] = await Promise.all([backlog, watched]);
  const memory = watch?.state() ?? { losses: [], unreadableSince: null };
  const staleSince = memory.unreadableSince !== null ? new Date(memory.unreadableSince).toISOString() : null;
  const keys = inspectedHandlers(ctx);
  // The queries say whether the store is up; the alert rules may live elsewhere (vmalert) or be
  // missing, which the alerts block reports on its own.
  const failures = [ratio, processed, p50, p99, errors].flatMap((g) => (g.ok ? [] : [g.detail]));

  const rows = [...handlerRows(processed, keys, memory.losses)];
  showing(rows.map((r) => r.service));
  const signals = await signalsRead;
  const reads: Reads = {
    ctx,
    processed,
    ratio,
    p50,
    p99,
    errors,
    runtime,
    redisTime,
    unchecked,
    now,
    keys,
    memory,
    staleSince,
    dlq,
    signals,
    alertRules: alertRulesOrLastKnown(ctx, alerts),
    unknownAlerts: alertsUnknown(ctx, alerts),
    beforeStart: ctx.mode === "real" ? windowBeforeStart(Date.now(), process.uptime()) : null,
  };
  const handlers: OverviewHandler[] = rows
    .sort((a, b) => a.service.localeCompare(b.service) || a.handler.localeCompare(b.handler))
    .map((r) => withScrape(handlerRow(r, reads), signals));

  return {
    generatedAt: new Date().toISOString(),
    mode: ctx.mode,
    range,
    source: ctx.metrics.kind,
    upstream: { prometheus: metricsUpstream(ctx, failures), store: storeUpstream(ctx) },
    thresholds: thresholdsView(),
    handlers,
    alerts: alertsField(ctx, alerts),
    scrapeCoverage: await coverage,
  };
}
