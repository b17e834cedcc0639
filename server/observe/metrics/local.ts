import type { Registry } from "prom-client";
import type { AlertInstance, AlertRule } from "@/lib/api/alerts";
import { alertTimes, isoOrNull } from "@/lib/alert-transitions";
import { ALERT_LIST } from "@/lib/thresholds";
import { alertTextsFor, renderAlertText, RUNBOOK_PATH, runbookUrl, type AlertThreshold } from "@/lib/alert-model";
import { evaluate, type Evaluate } from "./local-eval";
import { seriesKey, type Snapshot, type SeriesValue } from "./local-promql";
import { worst } from "./prometheus";
import type { QueryName } from "@/lib/named-queries";
import type { MetricsSource, RangeSeries, Sample } from "./source";

/** Options of {@link LocalSource}. */
export interface LocalSourceOptions {
  /** Time between two samples of the registry. 100..60000 ms. @default 5000 */
  intervalMs: number;
  /** Samples kept (ring buffer); older ones are dropped. 10..100000. @default 2160 (3 h at 5 s) */
  capacity: number;
  /** The alerts evaluated after each sample. @default ALERT_LIST (lib/thresholds) */
  alerts: readonly AlertThreshold[];
  /** Where each rule's runbook link points (`RUNBOOK_BASE_URL`). @default "/runbook" (the app's own page) */
  runbookBase: string;
  /** How a named query is evaluated. @default evaluate (local-eval: every named query of lib/named-queries) */
  evaluate: Evaluate;
}

/** Defaults of {@link LocalSourceOptions}. */
export const DEFAULT_LOCAL_SOURCE_OPTIONS: LocalSourceOptions = {
  intervalMs: 5000,
  capacity: 2160,
  alerts: ALERT_LIST,
  runbookBase: RUNBOOK_PATH,
  evaluate,
};

/**
 * Embedded-mode metrics: samples the app's own prom-client Registry every `intervalMs` into a
 * bounded ring buffer and answers the same named queries as Prometheus would (rates over 5 min,
 * the duplicate ratio, histogram quantiles). After each sample it evaluates every alert of
 * lib/thresholds with their `for` durations, as Prometheus's rule manager does (inactive →
 * pending when the condition holds → firing once it held for `for`; back to inactive at once).
 * History starts when the process does: rates need two samples.
 */
export class LocalSource implements MetricsSource {
  readonly kind = "local" as const;
  private readonly opts: LocalSourceOptions;
  private readonly snaps: Snapshot[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;
  private sampling: Promise<void> | null = null;
  /** Active alert instances: key → activeAt and firedAt (sample times, ms) and last value. */
  private readonly active = new Map<
    string,
    {
      alert: AlertThreshold;
      labels: Record<string, string>;
      activeAt: number;
      firedAt: number | null;
      value: number | null;
    }
  >();

  constructor(
    private readonly registry: Registry,
    opts: Partial<LocalSourceOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    const o = { ...DEFAULT_LOCAL_SOURCE_OPTIONS, ...opts };
    if (!(Number.isInteger(o.intervalMs) && o.intervalMs >= 100 && o.intervalMs <= 60_000))
      throw new RangeError(`intervalMs: expected an integer in 100..60000, got ${o.intervalMs}`);
    if (!(Number.isInteger(o.capacity) && o.capacity >= 10 && o.capacity <= 100_000))
      throw new RangeError(`capacity: expected an integer in 10..100000, got ${o.capacity}`);
    this.opts = o;
  }

  /** Starts sampling (idempotent); the timer does not keep the process alive. */
  start(): this {
    if (!this.timer) {
      void this.sample();
      this.timer = setInterval(() => void this.sample(), this.opts.intervalMs);
      this.timer.unref?.();
    }
    return this;
  }

  /** Stops sampling. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Samples kept now. */
  get size(): number {
    return this.snaps.length;
  }

  /** Takes one sample now and evaluates the alerts (tests call it directly instead of waiting). */
  sample(): Promise<void> {
    this.sampling ??= this.doSample().finally(() => {
      this.sampling = null;
    });
    return this.sampling;
  }

  private async doSample(): Promise<void> {
    const t = this.now();
    const series = new Map<string, SeriesValue>();
    for (const m of await this.registry.getMetricsAsJSON()) {
      for (const v of m.values as Array<{
        labels: Record<string, string | number>;
        value: number;
        metricName?: string;
      }>) {
        const name = v.metricName ?? m.name;
        const labels: Record<string, string> = {};
        for (const [k, x] of Object.entries(v.labels)) labels[k] = String(x);
        series.set(seriesKey(name, labels), { name, labels, value: v.value });
      }
    }
    this.snaps.push({ t, series });
    if (this.snaps.length > this.opts.capacity) this.snaps.splice(0, this.snaps.length - this.opts.capacity);
    this.evaluateAlerts(t);
  }

  private evaluateAlerts(t: number): void {
    const seen = new Set<string>();
    for (const a of this.opts.alerts) {
      for (const s of this.opts.evaluate(this.snaps, a.query, t)) {
        if (s.value === null || !(s.value > a.threshold.value)) continue;
        const k = `${a.name}\u0000${seriesKey("", s.labels)}`;
        seen.add(k);
        // Prometheus' rule manager: pending from the evaluation that first sees the condition,
        // firing at the first evaluation with t − activeAt ≥ for (for: 0 fires at once).
        const e = this.active.get(k);
        if (e) {
          e.value = s.value;
          if (e.firedAt === null && t - e.activeAt >= a.forMs) e.firedAt = t;
        } else
          this.active.set(k, {
            alert: a,
            labels: s.labels,
            activeAt: t,
            firedAt: a.forMs <= 0 ? t : null,
            value: s.value,
          });
      }
    }
    for (const k of [...this.active.keys()]) if (!seen.has(k)) this.active.delete(k);
  }

  async instant(q: QueryName, atSec?: number): Promise<Sample[]> {
    const last = this.snaps.at(-1)?.t ?? this.now();
    return this.opts.evaluate(this.snaps, q, atSec === undefined ? last : Math.min(last, atSec * 1000));
  }

  async range(q: QueryName, startSec: number, endSec: number, stepSec: number): Promise<RangeSeries[]> {
    const out = new Map<string, RangeSeries>();
    const first = this.snaps[0]?.t ?? Infinity;
    for (let ts = startSec; ts <= endSec; ts += stepSec) {
      if (ts * 1000 < first) continue; // no history yet: no point (never a fake 0)
      for (const s of this.opts.evaluate(this.snaps, q, ts * 1000)) {
        const k = seriesKey("", s.labels);
        const e = out.get(k) ?? { labels: s.labels, points: [] };
        e.points.push([ts, s.value]);
        out.set(k, e);
      }
    }
    return [...out.values()];
  }

  async alerts(): Promise<AlertRule[]> {
    return this.opts.alerts.map((a): AlertRule => {
      const instances: AlertInstance[] = [...this.active.values()]
        .filter((e) => e.alert.name === a.name)
        .map((e): AlertInstance => {
          // States change at samples (evaluations) only, as in Prometheus: never between two.
          const state = e.firedAt !== null ? "firing" : "pending";
          const times = alertTimes({
            state,
            activeAtMs: e.activeAt,
            forMs: a.forMs,
            intervalMs: this.opts.intervalMs,
            observedFiringMs: e.firedAt,
          });
          return {
            alert: a.name,
            state,
            labels: e.labels,
            activeAt: new Date(e.activeAt).toISOString(),
            firingSince: isoOrNull(times.firingSince),
            firesAt: isoOrNull(times.firesAt),
            value: e.value,
            severity: a.severity,
            summary: renderAlertText(alertTextsFor(a, e.labels).summary, a, e.labels, e.value),
          };
        });
      return {
        alert: a.name,
        state: worst(instances.map((i) => i.state)),
        title: a.title,
        expr: a.expr,
        for: a.for,
        threshold: a.threshold.value,
        unit: a.unit,
        runbookUrl: runbookUrl(a.runbookAnchor, this.opts.runbookBase),
        evaluationIntervalMs: this.opts.intervalMs,
        instances,
      };
    });
  }
}
