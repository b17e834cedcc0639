/**
 * The rows of `GET /api/overview` (lib/api/overview.ts): which handlers it shows, and each one's
 * figures from what the overview read once (`./overview.ts` reads them).
 */
import type { AlertInstance, AlertRule } from "@/lib/api/alerts";
import type { OverviewHandler } from "@/lib/api/overview";
import { WORKSHOP_SERVICE } from "@/names/product";
import type { QueryName } from "@/lib/named-queries";
import type { ObserveContext } from "../core/ports";
import { declaredHandlers } from "../core/handler-registry";
import { isTransactional } from "../shared/fleet-info";
import { alertsUnknown, handlerAlerts } from "../shared/alerts-field";
import { handlerPrefix } from "../keys/glob";
import type { Sample } from "../metrics/source";
import type { MemoryLoss } from "../shared/memory-loss";
import { latencyPartsOf, rowSignals, runtimePartOf } from "../shared/overview-signals";
import { measured, type Signals } from "../shared/signals";
import { inspectedHandlers, unavailable } from "../shared/upstream";
import { dlqBacklog, handlerBacklog } from "../watchers/dlq-backlog";

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

export type Got = { ok: true; value: Sample[] } | { ok: false; detail: string };

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
export const NOW_QUERIES = [
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

/** What the overview read once, for every handler's row. */
export interface Reads {
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
  /** `beforeStart` of every row: when this process started, while the window still reaches before it. */
  beforeStart?: OverviewHandler["beforeStart"];
}

/** One overview row's identity: a handler, its topics and declared TTL class. */
export interface RowKey {
  service: string;
  handler: string;
  topics: Set<string>;
  ttlClass: OverviewHandler["ttlClass"];
}

/** The handlers of the overview: from metrics, from the store's prefixes, and from the app's declarations. */
export function handlerRows(
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
    // A Kafka-transactions handler has no window, so no class (its setup's is a placeholder).
    r.ttlClass = isTransactional(d) ? null : d.setup.ttlClass;
    if (d.topic) r.topics.add(d.topic);
  }
  return rows.values();
}

/** One handler's key counts from the last inspection, or why there are none. */
function keysField(r: RowKey, x: Reads): OverviewHandler["keys"] {
  const { ctx, keys, staleSince } = x;
  const keyRow = keys.ok
    ? keys.value.find(
        (h) => h.prefix === handlerPrefix(r.service, r.handler) || (h.service === r.service && h.handler === r.handler),
      )
    : undefined;
  return !keys.ok
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
          (ctx.inspector?.current().result ? new Date(ctx.inspector.current().result!.finishedAt).toISOString() : null),
        recount: ctx.inspector?.recount() ?? null,
        staleSince,
      };
}

/** One handler's row of the overview from what was read once. */
export function handlerRow(r: RowKey, x: Reads): OverviewHandler {
  const { processed, ratio, p50, p99, errors, runtime, redisTime, unchecked, now, memory, dlq, signals } = x;
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
    keys: keysField(r, x),
    memoryLost: lostOf(memory.losses, r.service, r.handler),
    dlqBacklog: handlerBacklog(dlq, r.handler, r.topics),
    alerts: instances,
    alertsUnknown: x.unknownAlerts,
    beforeStart: x.beforeStart ?? null,
  };
}
