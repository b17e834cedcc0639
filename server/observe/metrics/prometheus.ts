import type { AlertInstance, AlertRule } from "@/lib/api/alerts";
import type { AlertStateName } from "@/lib/api/common";
import { alertTimes, isoOrNull } from "@/lib/alert-transitions";
import { ALERT_LIST } from "@/lib/thresholds";
import { RUNBOOK_PATH, runbookUrl } from "@/lib/alert-model";
import { SharedCache } from "../core/cache";
import { countUpstream } from "../core/upstream-counter";
import { PROMQL, type QueryName } from "@/lib/named-queries";
import type { AlertsMemory, MetricsSource, RangeSeries, Sample } from "./source";
import { failureKind } from "@/server/redact";

/** Options of {@link PrometheusSource}. */
export interface PrometheusSourceOptions {
  /** Time allowed for one HTTP call to Prometheus. @default 2000 */
  timeoutMs: number;
  /** How long an answer is shared between requests. @default 2000 */
  cacheTtlMs: number;
  /** Where each rule's runbook link points (`RUNBOOK_BASE_URL`). @default "/runbook" (the app's own page) */
  runbookBase: string;
}

/** Defaults of {@link PrometheusSourceOptions}. */
export const DEFAULT_PROMETHEUS_SOURCE_OPTIONS: PrometheusSourceOptions = {
  timeoutMs: 2000,
  cacheTtlMs: 2000,
  runbookBase: RUNBOOK_PATH,
};

/** Where to reach a Prometheus: the URL without userinfo, and the headers that carry it. */
export interface PrometheusEndpoint {
  /** `PROMETHEUS_URL` without `user:pass@` and without trailing slashes. */
  base: string;
  /** `Authorization: Basic …` when the URL held userinfo, else empty. */
  headers: Record<string, string>;
}

/**
 * Splits `PROMETHEUS_URL` into a fetchable base and its credentials: `fetch` refuses a URL with
 * `user:pass@`, so the userinfo (percent-decoded, as a browser would send it) becomes an
 * `Authorization: Basic` header (RFC 7617) and leaves the URL. The error redaction
 * (server/redact.ts) still hides the configured value, its userinfo and its password.
 */
export function prometheusEndpoint(url: string): PrometheusEndpoint {
  const u = new URL(url);
  const headers: Record<string, string> = {};
  if (u.username || u.password) {
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`, "utf8").toString("base64")}`;
    u.username = "";
    u.password = "";
  }
  return { base: u.toString().replace(/\/+$/, ""), headers };
}

/** Prometheus answered with an error or could not be reached. */
export class PrometheusError extends Error {
  constructor(message: string) {
    super(`prometheus: ${message}`);
    this.name = "PrometheusError";
  }
}

/**
 * `/api/v1/rules` answered but lists none of the dashboard's alert rules, so nothing there says
 * whether they fire: the alerts read as unavailable rather than inactive.
 */
export class AlertRulesMissingError extends PrometheusError {
  constructor() {
    super(
      `/api/v1/rules lists none of ${ALERT_LIST.map((a) => a.name).join(", ")}: alert state unknown. ` +
        "Load infra/prometheus/rules/dedup.yml into the Prometheus at PROMETHEUS_URL, or, for VictoriaMetrics, run vmalert with it and start victoria-metrics with -vmalert.proxyURL (docs/METRICS-STORES.md)",
    );
    this.name = "AlertRulesMissingError";
  }
}

interface PromVectorItem {
  metric: Record<string, string>;
  value: [number, string];
}
interface PromMatrixItem {
  metric: Record<string, string>;
  values: Array<[number, string]>;
}
interface PromRule {
  type: string;
  name: string;
  query: string;
  duration?: number;
  state?: AlertStateName;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  alerts?: Array<{
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    state: AlertStateName;
    activeAt?: string;
    value?: string;
  }>;
}

/**
 * Reads the named queries from a Prometheus server (`/api/v1/query`, `/api/v1/query_range`) and
 * alert states from `/api/v1/rules`; any store with Prometheus' HTTP API will do (VictoriaMetrics
 * single-node is tested: docs/METRICS-STORES.md). **An answer listing none of the alert rules
 * throws {@link AlertRulesMissingError}** (state unknown, never "inactive"). Answers are shared: concurrent identical calls make one HTTP
 * request, reused for `cacheTtlMs`; range windows are aligned to the step so that viewers who ask
 * a second apart share them too.
 */
export class PrometheusSource implements MetricsSource {
  readonly kind = "prometheus" as const;
  private readonly opts: PrometheusSourceOptions;
  private readonly cache: SharedCache;
  private readonly base: string;
  private readonly headers: Record<string, string>;
  /** The last successful rule read, and since when (ms) reads fail: unknown is not inactive. */
  private lastRules: AlertsMemory["lastKnown"] = null;
  private rulesDownSince: number | null = null;

  constructor(baseUrl: string, opts: Partial<PrometheusSourceOptions> = {}) {
    const o = { ...DEFAULT_PROMETHEUS_SOURCE_OPTIONS, ...opts };
    if (!(o.timeoutMs >= 1 && o.timeoutMs <= 60_000))
      throw new RangeError(`timeoutMs: expected 1..60000, got ${o.timeoutMs}`);
    if (!(o.cacheTtlMs >= 0 && o.cacheTtlMs <= 60_000))
      throw new RangeError(`cacheTtlMs: expected 0..60000, got ${o.cacheTtlMs}`);
    this.opts = o;
    this.cache = new SharedCache({ ttlMs: o.cacheTtlMs, errorTtlMs: Math.min(1000, o.cacheTtlMs) });
    const endpoint = prometheusEndpoint(baseUrl);
    this.base = endpoint.base;
    this.headers = endpoint.headers;
  }

  instant(q: QueryName, atSec?: number): Promise<Sample[]> {
    // Pinned instants are rounded down to the cache's period, so that answers built a moment apart
    // share their queries as before (no figure older than the cache already allowed).
    const ttl = this.opts.cacheTtlMs;
    const time =
      atSec === undefined
        ? undefined
        : ttl > 0
          ? ((Math.floor((atSec * 1000) / ttl) * ttl) / 1000).toFixed(3)
          : atSec.toFixed(3);
    return this.cache.get(`i:${q}:${time ?? "now"}`, async () => {
      const data = await this.get<{ resultType: string; result: PromVectorItem[] }>("/api/v1/query", {
        query: PROMQL[q],
        ...(time === undefined ? {} : { time }),
      });
      return data.result.map((r) => ({ labels: stripName(r.metric), value: num(r.value[1]) }));
    });
  }

  range(q: QueryName, startSec: number, endSec: number, stepSec: number): Promise<RangeSeries[]> {
    const end = Math.floor(endSec / stepSec) * stepSec;
    const start = Math.floor(startSec / stepSec) * stepSec;
    return this.cache.get(`r:${q}:${start}:${end}:${stepSec}`, async () => {
      const data = await this.get<{ resultType: string; result: PromMatrixItem[] }>("/api/v1/query_range", {
        query: PROMQL[q],
        start: String(start),
        end: String(end),
        step: String(stepSec),
      });
      return data.result.map((r) => ({
        labels: stripName(r.metric),
        points: r.values.map(([t, v]) => [t, num(v)] as [number, number | null]),
      }));
    });
  }

  /** See {@link MetricsSource.alertsMemory}. */
  alertsMemory(): AlertsMemory {
    return {
      unavailableSince: this.rulesDownSince === null ? null : new Date(this.rulesDownSince).toISOString(),
      lastKnown: this.lastRules,
    };
  }

  alerts(): Promise<AlertRule[]> {
    return this.readAlerts().then(
      (rules) => {
        this.rulesDownSince = null;
        this.lastRules = { at: new Date().toISOString(), rules };
        return rules;
      },
      (e: unknown) => {
        this.rulesDownSince ??= Date.now();
        throw e;
      },
    );
  }

  private readAlerts(): Promise<AlertRule[]> {
    return this.cache.get("rules", async () => {
      const data = await this.get<{ groups: Array<{ interval?: number; rules: PromRule[] }> }>("/api/v1/rules", {
        type: "alert",
      });
      const byName = new Map<string, PromRule & { intervalMs: number }>();
      for (const g of data.groups)
        for (const r of g.rules)
          if (r.type === "alerting") byName.set(r.name, { ...r, intervalMs: (g.interval ?? 0) * 1000 });
      // A store that evaluates no rules answers an empty list (VictoriaMetrics without
      // -vmalert.proxyURL; a Prometheus without the rule file): the state is unknown, not inactive.
      if (!ALERT_LIST.some((a) => byName.has(a.name))) throw new AlertRulesMissingError();
      return ALERT_LIST.map((a): AlertRule => {
        const r = byName.get(a.name);
        const forMs = r?.duration !== undefined ? r.duration * 1000 : a.forMs;
        const intervalMs = r?.intervalMs ?? 0;
        const instances: AlertInstance[] = (r?.alerts ?? []).map((x) => {
          const activeAt = x.activeAt && !x.activeAt.startsWith("0001") ? x.activeAt : null;
          // /api/v1/rules gives activeAt (pending start) only; the firing start is the first
          // evaluation at or after activeAt + for, evaluations being the group's interval apart.
          const t = alertTimes({
            state: x.state,
            activeAtMs: activeAt ? Date.parse(activeAt) : null,
            forMs,
            intervalMs,
          });
          return {
            alert: a.name,
            state: x.state,
            labels: withoutAlertLabels(x.labels),
            activeAt,
            firingSince: isoOrNull(t.firingSince),
            firesAt: isoOrNull(t.firesAt),
            value: x.value === undefined ? null : num(x.value),
            severity: x.labels.severity ?? a.severity,
            summary: x.annotations?.summary ?? a.title,
          };
        });
        return {
          alert: a.name,
          state: worst(instances.map((i) => i.state)),
          title: a.title,
          expr: r?.query ?? a.expr,
          for: a.for,
          threshold: a.threshold.value,
          unit: a.unit,
          runbookUrl: runbookUrl(a.runbookAnchor, this.opts.runbookBase),
          evaluationIntervalMs: intervalMs,
          instances,
        };
      });
    });
  }

  private async get<T>(path: string, params: Record<string, string>): Promise<T> {
    const url = `${this.base}${path}?${new URLSearchParams(params).toString()}`;
    let res: Response;
    try {
      res = await countUpstream("prometheus", () =>
        fetch(url, { signal: AbortSignal.timeout(this.opts.timeoutMs), cache: "no-store", headers: this.headers }),
      );
    } catch (e) {
      // Never the URL: it may hold userinfo, a query or an internal host (server/redact.ts).
      throw new PrometheusError(`unreachable (${failureKind(e)})`);
    }
    let body: { status?: string; data?: T; error?: string };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new PrometheusError(`${path} answered HTTP ${res.status} without JSON`);
    }
    if (!res.ok || body.status !== "success" || body.data === undefined) {
      throw new PrometheusError(`${path} answered HTTP ${res.status}: ${body.error ?? "no data"}`);
    }
    return body.data;
  }
}

function num(s: string): number | null {
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
}

function stripName(m: Record<string, string>): Record<string, string> {
  const { __name__: _n, ...rest } = m;
  return rest;
}

function withoutAlertLabels(m: Record<string, string>): Record<string, string> {
  // vmalert adds its rule group's name as `alertgroup` (unless -disableAlertgroupLabel); like
  // alertname and severity it names the rule, not the instance.
  const { alertname: _a, severity: _s, alertgroup: _g, ...rest } = m;
  return rest;
}

/** The worst of a set of alert states: firing > pending > inactive. */
export function worst(states: readonly AlertStateName[]): AlertStateName {
  if (states.includes("firing")) return "firing";
  if (states.includes("pending")) return "pending";
  return "inactive";
}
