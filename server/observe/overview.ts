/**
 * `GET /api/overview`: one row per handler (metrics, Redis keys, declarations), the upstreams'
 * health, the alerts and the scrape coverage. Its shared helpers live in ./upstream.
 */
import { alertRulesOrLastKnown, alertsField, alertsUnknown, handlerAlerts } from "./alerts-field";
import type { AlertInstance, AlertRule } from "@/lib/api/alerts";
import type { RangeKey } from "@/lib/api/common";
import type { OverviewHandler, OverviewResponse, ThresholdsView } from "@/lib/api/overview";
import { ALERTS, THRESHOLDS, TTL_POLICY } from "@/lib/thresholds";
import { WORKSHOP_SERVICE } from "@/lib/api/workshop";
import type { ObserveContext } from "./context";
import { errorText } from "./errors";
import { handlerPrefix } from "./keys/glob";
import { declaredHandlers } from "./handler-registry";
import type { MemoryLoss } from "./memory-loss";
import { memoryWatchOf } from "./memory-watch";
import { dlqBacklog, handlerBacklog } from "./records/dlq-backlog";
import { buildScrapeCoverage } from "./scrape-coverage";
import { latencyPartsOf, rowSignals, runtimePartOf, withScrape } from "./overview-signals";
import { measured, readSignals, type Signals } from "./signals";
import type { QueryName } from "./metrics/queries";
import type { Sample } from "./metrics/source";
import { got, inspectedHandlers, metricsUpstream, storeUpstream, settleRedis, unavailable } from "./upstream";

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

const key = (service: string, handler: string) => `${service}\u0000${handler}`;

/** The held loss of one handler's dedup memory, as the overview row carries it. */
function lostOf(losses: readonly MemoryLoss[], service: string, handler: string): OverviewHandler["memoryLost"] {
  const l = losses.find((x) => x.service === service && x.handler === handler);
  return l ? { share: l.share, before: l.before, now: l.now, at: new Date(l.at).toISOString(), cause: l.cause } : null;
}

/** Samples summed by their `reason` label, with the total. */
function byReason(samples: readonly Sample[]): { status: "ok"; byReason: Record<string, number>; total: number } {
  const out: Record<string, number> = {};
  for (const s of samples)
    out[s.labels.reason ?? "unknown"] = (out[s.labels.reason ?? "unknown"] ?? 0) + (s.value ?? 0);
  return { status: "ok", byReason: out, total: Object.values(out).reduce((a, b) => a + b, 0) };
}

type Got = { ok: true; value: Sample[] } | { ok: false; detail: string };

/** The unchecked runs of one handler: "unknown" when its service does not export the counter (a total of 0 would be an all-clear). */
function uncheckedOf(
  unchecked: Got,
  signals: Signals,
  service: string,
  mine: (s: Sample) => boolean,
): OverviewHandler["unchecked"] {
  const m = measured(signals, service, "unchecked");
  if (m.status === "unknown") return m;
  return unchecked.ok ? byReason(unchecked.value.filter(mine)) : unavailable(unchecked.detail);
}

/** The "now" queries, in {@link nowOf}'s order. */
const NOW_QUERIES = [
  "duplicate_ratio_now",
  "error_rate_now",
  "check_p99_now",
  "error_quiet",
  "slow_check_quiet",
  "slow_check_rate",
] as const satisfies readonly QueryName[];

/**
 * One handler's "now" figures from the three `*_now` queries (ratio per handler, errors summed
 * over reasons and p99 per service), unavailable when one of them failed; and the evidence that a
 * fault is over (per service; null when its query failed or has no series).
 */
function nowOf(
  [ratio, errors, p99, errorQuiet, slowQuiet, slowRate]: readonly Got[],
  service: string,
  handler: string,
): OverviewHandler["now"] {
  if (!ratio?.ok) return unavailable(ratio?.detail ?? "no answer");
  if (!errors?.ok) return unavailable(errors?.detail ?? "no answer");
  if (!p99?.ok) return unavailable(p99?.detail ?? "no answer");
  const svc = (s: Sample) => s.labels.service === service;
  const value = (g: Got | undefined) => (g?.ok ? (g.value.find(svc)?.value ?? null) : null);
  const errs = errors.value.filter(svc);
  return {
    status: "ok",
    duplicateRatio: ratio.value.find((s) => svc(s) && s.labels.handler === handler)?.value ?? null,
    errorRate: errs.length ? errs.reduce((a, s) => a + (s.value ?? 0), 0) : null,
    checkP99Seconds: value(p99),
    errorQuietSeconds: value(errorQuiet),
    slowCheckQuietSeconds: value(slowQuiet),
    slowCheckRate: value(slowRate),
  };
}

/** Builds `GET /api/overview`. Shared between concurrent viewers for about a second. */
export function getOverview(ctx: ObserveContext, range: RangeKey): Promise<OverviewResponse> {
  return ctx.answers.get(`overview:${range}`, () => buildOverview(ctx, range));
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

/** What the overview read once, for every handler's row. */
interface Reads {
  ctx: ObserveContext;
  processed: Got;
  ratio: Got;
  p50: Got;
  p99: Got;
  errors: Got;
  runtime: Got;
  redisTime: Got | null;
  signals: Signals;
  unchecked: Got;
  now: readonly Got[];
  keys: ReturnType<typeof inspectedHandlers>;
  memory: { losses: readonly MemoryLoss[] };
  staleSince: string | null;
  dlq: Awaited<ReturnType<typeof dlqBacklog>>;
  alertRules: AlertRule[];
  unknownAlerts: ReturnType<typeof alertsUnknown>;
}

/** One overview row's identity: a handler, its topics and declared TTL class. */
interface RowKey {
  service: string;
  handler: string;
  topics: Set<string>;
  ttlClass: OverviewHandler["ttlClass"];
}

/** The handlers of the overview: from metrics, from the store's prefixes, and from the app's declarations. */
function handlerRows(
  processed: Got,
  keys: ReturnType<typeof inspectedHandlers>,
  losses: readonly MemoryLoss[],
): Iterable<RowKey> {
  const rows = new Map<string, RowKey>();
  const row = (service: string, handler: string) => {
    // Series of a workshop run that reached Prometheus before the workshop had its own registry.
    if (service === WORKSHOP_SERVICE)
      return { service, handler, topics: new Set<string>(), ttlClass: null as OverviewHandler["ttlClass"] };
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
  // A handler whose keys are all gone (Redis restarted empty) keeps its row to say so.
  for (const l of losses) row(l.service, l.handler);
  for (const d of declaredHandlers()) {
    const r = row(d.service, d.setup.handler);
    r.ttlClass = d.setup.ttlClass;
    if (d.topic) r.topics.add(d.topic);
  }
  return rows.values();
}

/** One handler's row of the overview from what was read once. */
function handlerRow(r: RowKey, x: Reads): OverviewHandler {
  const {
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
  } = x;
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
  if (errors.ok)
    for (const s of errors.value.filter(svc))
      errs[s.labels.reason ?? "unknown"] = (errs[s.labels.reason ?? "unknown"] ?? 0) + (s.value ?? 0);
  const keyRow = keys.ok
    ? keys.value.find(
        (h) => h.prefix === handlerPrefix(r.service, r.handler) || (h.service === r.service && h.handler === r.handler),
      )
    : undefined;
  const instances: AlertInstance[] = handlerAlerts(x.alertRules, r.service, r.handler);
  const first = (g: { ok: true; value: Sample[] } | { ok: false; detail: string }) =>
    g.ok ? (g.value.find(svc)?.value ?? null) : null;
  return {
    service: r.service,
    handler: r.handler,
    topics: [...r.topics].sort(),
    ttlClass: r.ttlClass,
    duplicateRatio:
      ratio.ok && processed.ok
        ? { status: "ok" as const, value: ratioValue }
        : unavailable(ratio.ok ? (processed as { detail: string }).detail : ratio.detail),
    processedRate: processed.ok ? { status: "ok" as const, total, byResult } : unavailable(processed.detail),
    checkLatency:
      p50.ok && p99.ok
        ? { status: "ok" as const, p50Seconds: first(p50), p99Seconds: first(p99) }
        : unavailable(p50.ok ? (p99 as { detail: string }).detail : p50.detail),
    latencyParts: latencyPartsOf(
      runtimePartOf(runtime.ok ? runtime.value : null, r.service),
      redisTime?.ok ? redisTime.value : null,
      p99.ok ? first(p99) : null,
    ),
    signals: rowSignals(signals, r.service),
    unchecked: uncheckedOf(unchecked, signals, r.service, mine),
    now: nowOf(now, r.service, r.handler),
    errorRates: errors.ok
      ? { status: "ok" as const, byReason: errs, total: Object.values(errs).reduce((a, b) => a + b, 0) }
      : unavailable(errors.detail),
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
          countedAt:
            keyRow?.countedAt ??
            (ctx.inspector?.current().result
              ? new Date(ctx.inspector.current().result!.finishedAt).toISOString()
              : null),
          recount: ctx.inspector?.recount() ?? null,
          staleSince,
        },
    memoryLost: lostOf(memory.losses, r.service, r.handler),
    dlqBacklog: handlerBacklog(dlq, r.handler, r.topics),
    alerts: instances,
    alertsUnknown: x.unknownAlerts,
  };
}
