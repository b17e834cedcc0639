"use client";

import { useQueries, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { ReactNode } from "react";
import type { OverviewHandler, OverviewResponse } from "@/lib/api/overview";
import { overviewQuery, seriesQuery } from "@/lib/query-options";
import { THRESHOLDS, ALERTS } from "@/lib/thresholds";
import { RATE_WINDOW_MS } from "@/lib/alert-exprs";
import { hrefWithView, REFRESH_MS, useViewState } from "@/lib/url-state";
import { AlertBadge } from "../alerts/alert-badge";
import { SeriesPanel } from "../charts/series-panel";
import { LabeledSelect } from "../field";
import { Panel, UnavailableState } from "../panel";
import { QueryView } from "../query-state";
import { FLEET_TABLE_MIN_HANDLERS } from "@/lib/fleet-view";
import { CapacityTable } from "./capacity-table";
import { DeferMount } from "./defer-mount";
import { FleetTable } from "./fleet-table";
import { alertsCalm, AlertsCalmLine, AlertsPanel } from "./alerts-section";
import { HandlerStats } from "./stats";
import { formatInstant } from "@/lib/clock-time";

/** Duplicate-ratio alert line (10%), from the one source of thresholds (lib/thresholds). */
export const DUP_ALERT = { value: THRESHOLDS.duplicateRatio, label: ALERTS.duplicateRate.threshold.label };
/** The < 1% normal background band of the duplicate ratio. */
export const DUP_NORMAL = { value: THRESHOLDS.duplicateRatioNormal, label: ALERTS.duplicateRate.normal.label };
/** Store check p99 alert line (50 ms). */
export const P99_ALERT = { value: THRESHOLDS.checkP99Seconds, label: `${ALERTS.redisLatency.threshold.label} alert` };
/** Dedup error-rate alert line (any error: > 0/s). */
export const ERR_ALERT = { value: THRESHOLDS.errorRate, label: "alert > 0" };
/** Colours of the error reasons of spec §7. */
export const ERROR_COLORS = { redis_timeout: "#f59e0b", redis_conn: "#ef4444", marshal: "#a855f7" };
/** Empty duplicate-ratio answer: like PromQL, the ratio needs a deduplicated series on both sides. */
export const DUP_EMPTY =
  "no ratio: no traffic, or nothing deduplicated yet (messages_deduplicated_total has no series for this handler).";
/** Empty error-rate answer. */
export const ERR_EMPTY = "no dedup error recorded (deduplication_errors_total has no series): nothing to stack.";

const id = (h: { service: string; handler: string }) => `${h.service}/${h.handler}`;

/** `lazy`: the chart mounts when scrolled near or shortly after hydration (below the fold). */
function HandlerSection({ h, lazy = false }: { h: OverviewHandler; lazy?: boolean }) {
  const { params } = useViewState();
  const href = hrefWithView(`/handlers/${encodeURIComponent(h.service)}/${encodeURIComponent(h.handler)}`, params);
  const worst = h.alerts.some((a) => a.state === "firing")
    ? "firing"
    : h.alerts.some((a) => a.state === "pending")
      ? "pending"
      : "inactive";
  return (
    <section
      data-testid="handler-section"
      data-handler={id(h)}
      aria-labelledby={`h-${id(h)}`}
      className="space-y-3 rounded-lg border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900"
    >
      <header className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h2 id={`h-${id(h)}`} className="text-xl font-semibold">
          <Link
            href={href}
            prefetch={false}
            className="text-blue-700 underline-offset-2 hover:underline focus-visible:outline-2 dark:text-blue-300"
          >
            {h.service} / {h.handler}
          </Link>
        </h2>
        <span className="text-sm text-slate-600 dark:text-slate-300">
          TTL class {h.ttlClass ?? "not declared"} · topics {h.topics.length ? h.topics.join(", ") : "—"}
        </span>
        {h.alertsUnknown ? (
          <span className="ml-auto text-xs" data-testid="handler-alerts-unknown">
            alerts: <AlertBadge state={worst} unknown={h.alertsUnknown} />
          </span>
        ) : (
          <span
            className={`ml-auto rounded px-2 py-0.5 text-xs font-medium ${worst === "firing" ? "bg-red-100 text-red-900 dark:bg-red-900/50 dark:text-red-100" : worst === "pending" ? "bg-amber-100 text-amber-900 dark:bg-amber-900/40 dark:text-amber-100" : "bg-emerald-100 text-emerald-900 dark:bg-emerald-900/40 dark:text-emerald-100"}`}
          >
            alerts: {worst}
          </span>
        )}
      </header>
      <HandlerStats h={h} />
      <MaybeDefer lazy={lazy} height={262}>
        <SeriesPanel
          title={`Duplicate ratio — ${h.handler}`}
          description="deduplicated ÷ processed over 5 min; dashed: 10% alert; green: < 1% normal background"
          metric="duplicate_ratio"
          pick={{ service: h.service, handler: h.handler }}
          alert={DUP_ALERT}
          normal={DUP_NORMAL}
          testId="chart-duplicate-ratio"
          markers
          emptyText={DUP_EMPTY}
        />
      </MaybeDefer>
    </section>
  );
}

function MaybeDefer({ lazy, height, children }: { lazy: boolean; height: number; children: ReactNode }) {
  return lazy ? <DeferMount height={height}>{children}</DeferMount> : <>{children}</>;
}

function ServiceCharts({ service }: { service: string }) {
  return (
    <DeferMount height={262}>
      <div className="grid gap-4 lg:grid-cols-2" data-service={service}>
        <SeriesPanel
          title={`Dedup check latency, measured in the consumer — ${service}`}
          description="p50 and p99 of one dedup check (store round trip and the consumer's event loop); dashed: 50 ms alert"
          metric="check_latency"
          pick={{ service }}
          alert={P99_ALERT}
          testId="chart-check-latency"
          markers
          emptyText="no dedup check recorded."
        />
        <SeriesPanel
          title={`Dedup errors by reason — ${service}`}
          description="redis_timeout, redis_conn, marshal (stacked, errors/s); any error alerts"
          metric="error_rate"
          pick={{ service }}
          alert={ERR_ALERT}
          stacked
          testId="chart-error-rate"
          markers
          colors={ERROR_COLORS}
          emptyText={ERR_EMPTY}
          burst={{ windowMs: RATE_WINDOW_MS, what: "error" }}
        />
        <SeriesPanel
          title={`Consumer lag — ${service}`}
          description="messages each handler's consumer group has not consumed (kafka_consumergroup_lag)"
          metric="consumer_lag"
          pick={{ service }}
          testId="chart-consumer-lag"
          emptyText="no lag exported: real mode (Kafka) only."
        />
      </div>
    </DeferMount>
  );
}

/**
 * Says when Prometheus scrapes fewer (or other) replicas than the consumer groups have: every
 * figure below then shows only the scraped replicas' share of the traffic.
 */
function ScrapeCoverageBanner({ c }: { c: OverviewResponse["scrapeCoverage"] }) {
  if (!c || c.status !== "ok") return null;
  const off = c.services.filter((s) => s.mismatch && s.message);
  if (off.length === 0) return null;
  return (
    <div
      role="alert"
      data-testid="scrape-coverage-banner"
      className="rounded-lg border border-amber-400 bg-amber-50 px-4 py-3 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950/40 dark:text-amber-100"
    >
      {off.map((s) => (
        <p key={s.service} data-service={s.service}>
          {s.message}
        </p>
      ))}
    </div>
  );
}

function Body({ d }: { d: OverviewResponse }) {
  const { view, set } = useViewState();
  const shown = d.handlers.filter((h) => !view.handler || id(h) === view.handler);
  // A fleet (more than a handful of handlers) is a table, not a chart per handler and service.
  const fleet = !view.handler && d.handlers.length >= FLEET_TABLE_MIN_HANDLERS;
  const services = fleet ? [] : [...new Set(shown.map((h) => h.service))];
  // Nothing firing or pending: a line on top and the cards below the handlers, so the first screen
  // at 1280×720 holds the duplicate figures instead of seven "inactive" cards.
  const calm = alertsCalm(d);
  const alerts = <AlertsPanel d={d} />;
  return (
    <div className="space-y-4">
      <ScrapeCoverageBanner c={d.scrapeCoverage} />
      {calm ? <AlertsCalmLine d={d} /> : alerts}
      <div className="flex flex-wrap items-center gap-2">
        <LabeledSelect
          label="Handler"
          testId="handler-filter"
          value={view.handler ?? ""}
          options={[
            { value: "", label: `All handlers (${d.handlers.length})` },
            ...d.handlers.map((h) => ({ value: id(h), label: id(h) })),
          ]}
          onChange={(handler) => set({ handler: handler || null })}
        />
        <span className="text-xs text-slate-500 dark:text-slate-400" suppressHydrationWarning>
          Metrics from {d.source === "prometheus" ? "Prometheus" : "this process' registry"} · updated{" "}
          {formatInstant(d.generatedAt)}
        </span>
      </div>
      {d.handlers.length === 0 ? (
        <Panel title="Handlers" testId="handlers-empty">
          {d.upstream.prometheus.status === "down" || d.upstream.store.status === "down" ? (
            <div className="space-y-2">
              {d.upstream.prometheus.status === "down" ? (
                <UnavailableState detail={`prometheus: ${d.upstream.prometheus.detail}`} height={60} />
              ) : null}
              {d.upstream.store.status === "down" ? (
                <UnavailableState detail={`redis: ${d.upstream.store.detail}`} height={60} />
              ) : null}
              <p className="text-sm text-slate-500 dark:text-slate-400">
                Handlers are found from their metrics and their keys; an upstream that does not answer hides them.
              </p>
            </div>
          ) : (
            <p data-state="empty" className="text-sm text-slate-500 dark:text-slate-400">
              No handler has reported metrics or keys yet. Start the demo traffic (Workshop → live demo) or point the
              dashboard at your services&apos; Prometheus and Redis.
            </p>
          )}
        </Panel>
      ) : null}
      {fleet ? (
        <FleetTable handlers={d.handlers} />
      ) : (
        shown.map((h, i) => <HandlerSection key={id(h)} h={h} lazy={i > 0} />)
      )}
      {calm ? alerts : null}
      {services.map((s) => (
        <ServiceCharts key={s} service={s} />
      ))}
      {fleet ? null : <CapacityTable only={view.handler ? (shown[0] ?? null) : null} />}
    </div>
  );
}

/** The overview: alerts, every handler's duplicate ratio, each service's latency and errors, keys vs projection. */
export function OverviewView() {
  const { view } = useViewState();
  const interval = REFRESH_MS[view.refresh];
  const q = useQuery(overviewQuery(view.range, interval));
  // The charts' series for every handler, requested now, in parallel with the overview: the panels
  // mount once the overview answers and find them in the cache (same query keys, one request each).
  useQueries({
    queries: (["duplicate_ratio", "check_latency", "error_rate"] as const).map((metric) =>
      seriesQuery({ metric, range: view.range }, interval),
    ),
  });
  return (
    <QueryView query={q} what="Overview" height={240}>
      {(d) => <Body d={d} />}
    </QueryView>
  );
}
