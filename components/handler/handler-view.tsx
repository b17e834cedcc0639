"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { AlertsField } from "@/lib/api/alerts";
import type { OverviewHandler } from "@/lib/api/overview";
import { capacityQuery, overviewQuery } from "@/lib/query-options";
import { hrefWithView, REFRESH_MS, useViewState } from "@/lib/url-state";
import { AlertBadge } from "../alerts/alert-badge";
import { SeriesPanel } from "../charts/series-panel";
import { CapacityTable } from "../overview/capacity-table";
import { DeferMount } from "../overview/defer-mount";
import {
  DUP_ALERT,
  DUP_EMPTY,
  DUP_NORMAL,
  ERR_ALERT,
  ERR_EMPTY,
  ERROR_COLORS,
  P99_ALERT,
} from "../overview/overview-view";
import { HandlerStats } from "../overview/stats";
import { EmptyState, Panel } from "../panel";
import { QueryView } from "../query-state";
import { RATE_WINDOW_MS } from "@/lib/alert-exprs";
import { DuplicateCauses } from "./duplicate-causes";
import { HandlerKeys } from "./handler-keys";
import { HandlerLint } from "./handler-lint";
import { HandlerSelf, handlerSelfQuery } from "./handler-self";
import { HandlerTime } from "./handler-time";
import { HotKeys } from "./hot-keys";
import { LeaseEvents } from "./lease-events";
import { ReplaySilence } from "./replay-silence";

const RESULT_COLORS = { success: "#10b981", deduplicated: "#2563eb", error: "#ef4444" };

/** Labels every alert of this page shares (the page names them already) or that carry no meaning here. */
const SHARED_LABELS = new Set(["alertname", "severity", "service", "topic", "handler", "instance", "job"]);

/**
 * What tells one instance of an alert from another on the handler page — its other labels, e.g.
 * `reason="redis_conn"` for three DedupRedisErrors instances — or "" when nothing does.
 */
function ownLabels(labels: Record<string, string>): string {
  return Object.entries(labels)
    .filter(([k]) => !SHARED_LABELS.has(k))
    .map(([k, v]) => `${k}="${v}"`)
    .join(", ");
}

/** The runbook link of an alert, from the rules the answer carries (the server applies `RUNBOOK_BASE_URL`). */
function runbookOf(alerts: AlertsField, name: string): string | undefined {
  return (alerts.status === "ok" ? alerts.rules : (alerts.lastKnown ?? [])).find((r) => r.alert === name)?.runbookUrl;
}

/** The alert instances of one handler, each with what tells it from the others, its state and runbook; or that the states cannot be read. */
function HandlerAlerts({ h, alerts }: { h: OverviewHandler; alerts: AlertsField }) {
  if (h.alerts.length)
    return (
      <ul className="flex flex-wrap gap-2" aria-label="Alert instances of this handler">
        {h.alerts.map((a, i) => (
          <li key={i} className="flex items-center gap-1 text-xs">
            {a.alert}
            {ownLabels(a.labels) ? (
              <span className="font-mono text-slate-500 dark:text-slate-400" data-testid="alert-own-labels">
                {ownLabels(a.labels)}
              </span>
            ) : null}{" "}
            <AlertBadge
              state={a.state}
              since={a.activeAt}
              firingSince={a.firingSince}
              firesAt={a.firesAt}
              unknown={h.alertsUnknown}
            />
            {runbookOf(alerts, a.alert) ? (
              <a
                href={runbookOf(alerts, a.alert)}
                data-testid="handler-runbook"
                className="text-blue-700 underline hover:no-underline dark:text-blue-300"
              >
                runbook
              </a>
            ) : null}
          </li>
        ))}
      </ul>
    );
  if (h.alertsUnknown)
    return (
      <p className="text-xs" data-testid="handler-alerts-unknown">
        alerts: <AlertBadge state="inactive" unknown={h.alertsUnknown} />
      </p>
    );
  return null;
}

/** The handler's figures now: TTL class, topics, key prefix, headline numbers, alert instances, replay silence. */
function HandlerNow({ service, handler }: { service: string; handler: string }) {
  const { view } = useViewState();
  const q = useQuery(overviewQuery(view.range, REFRESH_MS[view.refresh]));
  const cap = useQuery(capacityQuery(REFRESH_MS[view.refresh]));
  // The class as declared, or inferred and said so ("default, inferred: keys live 24 h"): the Declared setup panel's answer.
  const self = useQuery(handlerSelfQuery(service, handler, REFRESH_MS[view.refresh]));
  const ttl = self.data?.ttl;
  const projected = cap.data?.handlers.find((h) => h.service === service && h.handler === handler)?.projectedKeys;
  return (
    <Panel title="Now" testId="handler-now">
      <QueryView query={q} what="Handler metrics" height={80}>
        {(d) => {
          const h = d.handlers.find((x) => x.service === service && x.handler === handler);
          if (!h)
            return (
              <EmptyState height={80}>
                No metrics or keys for {service}/{handler} yet: it has not processed a message, or the name is wrong.
              </EmptyState>
            );
          return (
            <div className="space-y-3">
              <p className="text-sm">
                TTL class{" "}
                <strong data-testid="ttl-class">
                  {ttl?.status === "ok" && ttl.classSource === "inferred"
                    ? ttl.text
                    : (h.ttlClass ?? (ttl?.status === "unknown" ? `unknown: ${ttl.detail}` : "not declared"))}
                </strong>
                {h.topics.length ? ` · topics ${h.topics.join(", ")}` : ""} · key prefix{" "}
                <code className="text-xs">{`${service}:dedup:${handler}:`}</code>
              </p>
              <HandlerStats h={h} {...(projected !== undefined ? { projectedKeys: projected } : {})} />
              <HandlerAlerts h={h} alerts={d.alerts} />
              <ReplaySilence service={service} handler={handler} />
            </div>
          );
        }}
      </QueryView>
    </Panel>
  );
}

/** The charts of what went wrong, below the fold: errors by reason, DLQ by reason, payload conflicts, consumer lag. */
function FailureCharts({ service, handler }: { service: string; handler: string }) {
  return (
    <>
      <DeferMount height={262}>
        <SeriesPanel
          title="Dedup errors by reason (service)"
          description="stacked errors/s; any error alerts"
          metric="error_rate"
          service={service}
          alert={ERR_ALERT}
          stacked
          testId="chart-error-rate"
          markers
          colors={ERROR_COLORS}
          emptyText={ERR_EMPTY}
          burst={{ windowMs: RATE_WINDOW_MS, what: "error" }}
        />
      </DeferMount>
      <DeferMount height={262}>
        <SeriesPanel
          title="DLQ by reason"
          description="messages/s sent to the dead-letter topic, by reason_poisoned"
          metric="dlq_rate"
          service={service}
          handler={handler}
          stacked
          testId="chart-dlq"
          markers
          emptyText="nothing sent to the DLQ."
          burst={{ windowMs: RATE_WINDOW_MS, what: "message" }}
        />
      </DeferMount>
      <DeferMount height={262}>
        <SeriesPanel
          title="Payload conflicts"
          description="copies whose UUID was processed with another payload, counted over 5 min: a publisher reusing UUIDs (any alerts); with chosen fingerprint fields, also the payloads that were not JSON and were fingerprinted by their bytes"
          metric="payload_conflicts"
          service={service}
          handler={handler}
          testId="chart-payload-conflicts"
          emptyText="no payload conflict: every repeat had the payload that was processed."
        />
        <SeriesPanel
          title="Consumer lag"
          description="messages the handler's consumer group has not consumed (kafka_consumergroup_lag, log-start clamped); DedupConsumerLagGrowing when it keeps growing above 100"
          metric="consumer_lag"
          service={service}
          handler={handler}
          testId="chart-consumer-lag"
          markers
          emptyText="no lag exported: real mode (Kafka) only."
        />
      </DeferMount>
    </>
  );
}

/** The handler's charts and tables, those below the fold mounted when scrolled near. */
function HandlerCharts({ service, handler }: { service: string; handler: string }) {
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <SeriesPanel
        title="Duplicate ratio"
        description="dashed: 10% alert; green: < 1% normal"
        metric="duplicate_ratio"
        service={service}
        handler={handler}
        alert={DUP_ALERT}
        normal={DUP_NORMAL}
        testId="chart-duplicate-ratio"
        markers
        emptyText={DUP_EMPTY}
      />
      <DuplicateCauses service={service} handler={handler} />
      {/* Below the fold: mounted when scrolled near, or shortly after hydration. */}
      <DeferMount height={262}>
        <SeriesPanel
          title="Processed by result"
          description="messages/s: success, deduplicated, error (stacked)"
          metric="processed_rate"
          service={service}
          handler={handler}
          stacked
          colors={RESULT_COLORS}
          testId="chart-processed"
          markers
        />
      </DeferMount>
      <DeferMount height={200}>
        <HotKeys service={service} handler={handler} />
      </DeferMount>
      <DeferMount height={330}>
        <HandlerTime service={service} handler={handler} />
      </DeferMount>
      <DeferMount height={330}>
        <LeaseEvents service={service} handler={handler} />
      </DeferMount>
      <DeferMount height={262}>
        <SeriesPanel
          title="Dedup check latency, measured in the consumer (service)"
          description="p50 and p99; dashed: 50 ms alert"
          metric="check_latency"
          service={service}
          alert={P99_ALERT}
          testId="chart-check-latency"
          markers
          emptyText="no dedup check recorded."
        />
      </DeferMount>
      <FailureCharts service={service} handler={handler} />
      <HandlerKeys service={service} handler={handler} />
    </div>
  );
}

/** Everything about one handler: numbers, charts, TTL class, lint, TTL distribution, DLQ reasons, capacity. */
export function HandlerView({ service, handler }: { service: string; handler: string }) {
  const { params } = useViewState();
  return (
    <div className="space-y-4">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-500 dark:text-slate-400">
        <Link href={hrefWithView("/", params)} className="underline">
          Overview
        </Link>{" "}
        › {service} › <span aria-current="page">{handler}</span>
      </nav>
      <h1 className="text-xl font-semibold">
        {service} / {handler}
      </h1>
      <HandlerNow service={service} handler={handler} />
      <HandlerCharts service={service} handler={handler} />
      <HandlerSelf service={service} handler={handler} />
      <HandlerLint service={service} handler={handler} />
      <CapacityTable only={{ service, handler }} />
    </div>
  );
}
