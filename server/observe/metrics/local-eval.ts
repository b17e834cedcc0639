/**
 * The embedded evaluation of every named query (lib/named-queries) over snapshots of the app's
 * registry, one entry per query in {@link EVALUATE}, built from the PromQL functions of
 * ./local-promql.ts.
 */
import { LAG_GROWTH_FLOOR, LAG_GROWTH_WINDOW_MS, RATE_WINDOW_MS } from "@/lib/alert-exprs";
import { NAMED_QUERIES, type NamedQuery, type QueryName } from "@/lib/named-queries";
import {
  DLQ_METRIC,
  DUPLICATES_BY_CAUSE_METRIC,
  HANDLER_P99_LINT_WINDOW_MS,
  HANDLER_TIME_METRIC,
} from "@/lib/query-exprs";
import { METRIC_NAMES, PROCESSED_RESULT, SLOW_CHECK_SECONDS } from "@/names/dedup";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import {
  CONSUMER_INFO_METRIC,
  EVENTLOOP_P99_METRIC,
  OBSERVE_METRIC_NAMES,
  PROCESS_START_METRIC,
  REDIS_COMMAND_TIME_METRIC,
} from "@/names/observe";
import {
  increaseAt,
  latest,
  nowWindow,
  quantileAt,
  rateAt,
  seriesKey,
  slope,
  sumBy,
  type Snapshot,
} from "./local-promql";
import type { Sample } from "./source";
import { exportedSignalsAt, hotUuidsAt, runtimeLatencyAt } from "./local-signals";

/** `service`, `handler` and `topic` of a consumer group named `<service>.<handler>` (this app's naming), else null. */
function handlerOfGroup(labels: Record<string, string>): Record<string, string> | null {
  const m = /^([^.]+)\.(.+)$/.exec(labels.consumergroup ?? "");
  return m ? { service: m[1]!, handler: m[2]!, topic: labels.topic ?? "" } : null;
}

/**
 * The lag growth query (`consumer_lag_growth`): the slope of each group's `kafka_consumergroup_lag_sum`
 * over the growth window, where its latest value is above the floor, max per service, handler, topic.
 */
function lagGrowthAt(snaps: readonly Snapshot[], t: number): Sample[] {
  const points = new Map<string, { labels: Record<string, string>; pts: Array<[number, number]>; last: number }>();
  for (const s of snaps) {
    if (s.t <= t - LAG_GROWTH_WINDOW_MS || s.t > t) continue;
    for (const [k, v] of s.series) {
      if (v.name !== KAFKA_METRIC_NAMES.lagSum) continue;
      const e = points.get(k) ?? { labels: v.labels, pts: [], last: v.value };
      e.pts.push([s.t, v.value]);
      e.last = v.value;
      points.set(k, e);
    }
  }
  const out = new Map<string, Sample & { value: number }>();
  for (const e of points.values()) {
    const labels = handlerOfGroup(e.labels);
    const d = slope(e.pts);
    if (!labels || d === null || !(e.last > LAG_GROWTH_FLOOR)) continue;
    const k = seriesKey("", labels);
    out.set(k, { labels, value: Math.max(out.get(k)?.value ?? -Infinity, d) });
  }
  return [...out.values()];
}

/** The lag gauges of the latest sample (real mode without Prometheus), summed per `<service>.<handler>` group and topic. */
function consumerLagAt(snaps: readonly Snapshot[], t: number): Sample[] {
  const out = new Map<string, Sample>();
  for (const v of latest(snaps, t)?.series.values() ?? []) {
    const labels = v.name === KAFKA_METRIC_NAMES.lag ? handlerOfGroup(v.labels) : null;
    if (!labels) continue;
    const k = seriesKey("", labels);
    out.set(k, { labels, value: (out.get(k)?.value ?? 0) + v.value });
  }
  return [...out.values()];
}

/** deduplicated / processed per `by` over the window ending at `t`; 0/0 is null, a side without series no sample. */
function ratioAt(snaps: readonly Snapshot[], t: number, by: readonly string[], windowMs = RATE_WINDOW_MS): Sample[] {
  const num = sumBy(rateAt(snaps, METRIC_NAMES.deduplicated, t, windowMs), by);
  const den = sumBy(rateAt(snaps, METRIC_NAMES.processed, t, windowMs), by);
  const out: Sample[] = [];
  for (const [k, n] of num) {
    const d = den.get(k);
    if (d) out.push({ labels: n.labels, value: d.value === 0 ? null : n.value / d.value });
  }
  return out;
}

/** One query's evaluation at `t`: its series labelled by `by`, counters over `windowMs` (gauges ignore it). */
export type Evaluator = (snaps: readonly Snapshot[], t: number, by: readonly string[], windowMs: number) => Sample[];

/** `sum by (by…) (rate(name[window]))`, or of `increase` when `increase` is set. */
const summed =
  (name: string, o: { increase?: boolean; keep?: (labels: Record<string, string>) => boolean } = {}): Evaluator =>
  (snaps, t, by, w) => [
    ...sumBy(
      (o.increase ? increaseAt : rateAt)(snaps, name, t, w).filter((r) => o.keep?.(r.labels) ?? true),
      by,
    ).values(),
  ];

/** `histogram_quantile(q, …)` of the histogram `name` per `by`. */
const quantile =
  (q: number, name: string): Evaluator =>
  (snaps, t, by, w) =>
    quantileAt(snaps, q, t, name, by, w);

/** `e` over `windowMs`, whatever the caller's window. */
const over =
  (windowMs: number, e: Evaluator): Evaluator =>
  (snaps, t, by) =>
    e(snaps, t, by, windowMs);

/** `e` "now": over the last two samples within the lookback ({@link nowWindow}); no sample without them. */
const now =
  (e: Evaluator): Evaluator =>
  (snaps, t, by) => {
    const w = nowWindow(snaps, t);
    return w ? e(snaps, w.t, by, w.ms) : [];
  };

/** A gauge: its series in the latest sample at or before `t`, labelled by `by` (absent = ""), `fixed` on top. */
const gauge =
  (name: string, fixed: Record<string, string> = {}): Evaluator =>
  (snaps, t, by) =>
    [...(latest(snaps, t)?.series.values() ?? [])]
      .filter((v) => v.name === name)
      .map((v) => ({
        labels: { ...Object.fromEntries(by.map((b) => [b, v.labels[b] ?? ""])), ...fixed },
        value: v.value,
      }));

/**
 * One sample per service this process consumes for (its consumer-info gauge, latest sample): this
 * process is the one consumer, so a process-wide value is every service's. None without a value.
 */
const perLocalService =
  (valueOf: (last: Snapshot) => number | undefined): Evaluator =>
  (snaps, t) => {
    const last = latest(snaps, t);
    const value = last ? valueOf(last) : undefined;
    if (!last || value === undefined) return [];
    const services = new Set(
      [...last.series.values()].filter((v) => v.name === CONSUMER_INFO_METRIC).map((v) => v.labels.service ?? ""),
    );
    return [...services].map((service) => ({ labels: { service }, value }));
  };

/**
 * `quietExpr(bad)` (./queries): per service, the seconds from the newest `bad` moment of any
 * handler to the sample that read it, 0 where no check came after it.
 */
const quiet =
  (bad: string): Evaluator =>
  (snaps, t) => {
    const last = latest(snaps, t);
    if (!last) return [];
    const age = new Map<string, number>();
    const newestBad = new Map<string, number>();
    const newestCheck = new Map<string, number>();
    const most = (m: Map<string, number>, k: string, v: number, f: (a: number, b: number) => number) =>
      m.set(k, m.has(k) ? f(m.get(k)!, v) : v);
    for (const v of last.series.values()) {
      const service = v.labels.service ?? "";
      if (v.name === bad) {
        most(age, service, last.t / 1000 - v.value, Math.min);
        most(newestBad, service, v.value, Math.max);
      } else if (v.name === METRIC_NAMES.lastCheck) most(newestCheck, service, v.value, Math.max);
    }
    return [...age].map(([service, value]) => ({
      labels: { service },
      value: (newestCheck.get(service) ?? -Infinity) > newestBad.get(service)! ? value : 0,
    }));
  };

/** `slowCheckRateExpr()` (./queries): all check samples per second minus those within the threshold's bucket. */
const slowCheckRate: Evaluator = (snaps, t, by, w) => {
  const h = METRIC_NAMES.checkDuration;
  const fast = sumBy(
    rateAt(snaps, `${h}_bucket`, t, w).filter((r) => r.labels.le === String(SLOW_CHECK_SECONDS)),
    by,
  );
  return [...sumBy(rateAt(snaps, `${h}_count`, t, w), by)].flatMap(([k, all]) => {
    const f = fast.get(k);
    return f ? [{ labels: all.labels, value: all.value - f.value }] : [];
  });
};

/** Every named query's embedded evaluation (a record over the names: a new name without one is a type error). */
export const EVALUATE: Readonly<Record<QueryName, Evaluator>> = {
  duplicate_ratio: ratioAt,
  duplicate_ratio_now: now(ratioAt),
  check_p99_now: now(quantile(0.99, METRIC_NAMES.checkDuration)),
  error_rate_now: now(summed(METRIC_NAMES.errors)),
  error_quiet: quiet(METRIC_NAMES.lastError),
  slow_check_quiet: quiet(METRIC_NAMES.lastSlowCheck),
  slow_check_rate: slowCheckRate,
  processed_rate: summed(METRIC_NAMES.processed),
  new_rate: summed(METRIC_NAMES.processed, { keep: (l) => l.result !== PROCESSED_RESULT.deduplicated }),
  check_p50: quantile(0.5, METRIC_NAMES.checkDuration),
  check_p99: quantile(0.99, METRIC_NAMES.checkDuration),
  error_rate: summed(METRIC_NAMES.errors),
  dlq_rate: summed(DLQ_METRIC),
  lease_lost_rate: summed(METRIC_NAMES.leaseLost),
  in_progress_rate: summed(METRIC_NAMES.inProgress),
  released_rate: summed(METRIC_NAMES.released),
  payload_conflicts: summed(METRIC_NAMES.payloadConflicts, { increase: true }),
  fingerprint_fallbacks: summed(METRIC_NAMES.fingerprintFallbacks, { increase: true }),
  // No Redis in embedded mode: no series.
  memory_lost: gauge(OBSERVE_METRIC_NAMES.memoryLost),
  // The dashboard's own gauge, in this process's registry.
  dlq_oldest_open_age: gauge(OBSERVE_METRIC_NAMES.dlqOldestOpenAge),
  // Deadman values: the one process is the consumer, the dashboard and the gauges' exporter; while
  // it evaluates, none of them is gone (its own death is for a Prometheus to see).
  consumer_gone_age: () => [],
  dashboard_down: () => [],
  fleet_gauges_gone_age: () => [],
  unchecked: summed(METRIC_NAMES.unchecked, { increase: true }),
  duplicates_by_cause: summed(DUPLICATES_BY_CAUSE_METRIC),
  handler_p50: quantile(0.5, HANDLER_TIME_METRIC),
  handler_p99: quantile(0.99, HANDLER_TIME_METRIC),
  handler_p99_1h: over(HANDLER_P99_LINT_WINDOW_MS, quantile(0.99, HANDLER_TIME_METRIC)),
  eventloop_p99: perLocalService(
    (last) => [...last.series.values()].find((v) => v.name === EVENTLOOP_P99_METRIC)?.value,
  ),
  redis_command_time: gauge(REDIS_COMMAND_TIME_METRIC),
  // This process is the one instance.
  consumer_instances: gauge(CONSUMER_INFO_METRIC, { instance: "local" }),
  consumer_lag: consumerLagAt,
  consumer_lag_growth: lagGrowthAt,
  // Prometheus' ALERTS series: the embedded evaluator keeps no history of states.
  alert_states: () => [],
  scrape_time: perLocalService((last) => last.t / 1000),
  process_start: gauge(PROCESS_START_METRIC, { instance: "local" }),
  handler_info: gauge(HANDLER_INFO_METRIC),
  exported_signals: exportedSignalsAt,
  runtime_latency: runtimeLatencyAt,
  hot_uuids: hotUuidsAt("copies"),
  hot_uuid_error_bound: hotUuidsAt("errorBound"),
};

/** Evaluates a named query at `t` over the snapshots: a query's series at one instant. */
export type Evaluate = (snaps: readonly Snapshot[], q: QueryName, t: number) => Sample[];

/**
 * The evaluation of the queries of `queries` by the evaluators of `evaluators`: the list and
 * {@link EVALUATE}, or copies with a planted entry (a test adding a query). **A name missing in
 * either throws** (the type of {@link EVALUATE} rules that out for the one list).
 */
export function evaluateWith(
  queries: readonly NamedQuery[],
  evaluators: Readonly<Record<string, Evaluator>>,
): Evaluate {
  const by = new Map(queries.map((q) => [q.name, q.by]));
  return (snaps, q, t) => {
    const e = evaluators[q];
    const labels = by.get(q);
    if (!e || !labels) throw new RangeError(`query ${q}: no named query or no evaluator of that name`);
    return e(snaps, t, labels, RATE_WINDOW_MS);
  };
}

/**
 * Evaluates a named query at time `t` over the snapshots, with the same semantics as its PromQL
 * (lib/named-queries): same labels; a ratio exists only where both sides have series; 0/0 gives
 * `null` (NaN in Prometheus).
 */
export const evaluate: Evaluate = evaluateWith(NAMED_QUERIES, EVALUATE);
