"use client";

import { useQuery } from "@tanstack/react-query";
import { HANDLER_INFO_LABEL } from "@/names/contract";
import { formatDurationMs, formatSeconds } from "@/lib/format";
import { halfLeaseLine, handlerTimeSummary } from "@/lib/handler-time";
import { bucketText, formatQuantile } from "@/lib/quantile-bucket";
import { HANDLER_TIME_BUCKETS } from "@/names/buckets";
import { lintQuery, seriesQuery } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { SeriesPanel } from "../charts/series-panel";
import { Stat } from "../panel";

/**
 * Handler time p50 / p99 of one attempt (`handler_execution_time_seconds`) against the handler's
 * declared `leaseMs`: the dashed line is half the lease, where the lint warns that a lease takeover
 * is near. The figures read the same series query as the chart (one request) and the lint (leaseMs).
 */
export function HandlerTime({ service, handler }: { service: string; handler: string }) {
  const { view } = useViewState();
  const series = useQuery(
    seriesQuery({ metric: "handler_time", range: view.range, service, handler }, REFRESH_MS[view.refresh]),
  );
  const lint = useQuery(lintQuery());
  const decl =
    lint.data?.declared.status === "ok"
      ? lint.data.declared.handlers.find((h) => h.service === service && h.handler === handler)
      : undefined;
  const lines = series.data?.data.status === "ok" ? series.data.data.series : [];
  const s = handlerTimeSummary(lines, decl?.leaseMs ?? null);
  const scale = halfLeaseLine(s.halfLeaseSeconds, lines);
  const half =
    s.halfLeaseSeconds !== null && scale.draw
      ? { value: s.halfLeaseSeconds, label: `half the lease (${formatSeconds(s.halfLeaseSeconds)})` }
      : null;
  return (
    <SeriesPanel
      title="Handler time"
      description={
        scale.note
          ? `one attempt of the handler itself, p50 and p99; ${scale.note}`
          : "one attempt of the handler itself, p50 and p99; dashed: half the lease"
      }
      metric="handler_time"
      service={service}
      handler={handler}
      alert={half}
      testId="chart-handler-time"
      emptyText="no handler attempt timed (handler_execution_time_seconds has no sample for this handler)."
      footer={
        <div className="mt-2 grid grid-cols-3 gap-2" data-testid="handler-time-figures">
          <Stat
            label="p50"
            value={formatSeconds(s.p50)}
            hint={bucketText(s.p50, HANDLER_TIME_BUCKETS) ?? undefined}
            testId="handler-p50"
          />
          <Stat
            label="p99"
            value={formatSeconds(s.p99)}
            tone={s.nearLease ? "warn" : "neutral"}
            hint={
              [bucketText(s.p99, HANDLER_TIME_BUCKETS), s.nearLease ? "above half the lease: a takeover is near" : null]
                .filter(Boolean)
                .join(" · ") || undefined
            }
            testId="handler-p99"
          />
          <Stat
            label="Lease"
            value={
              s.leaseMs === null
                ? (decl?.notApplicable.find((n) => n.label === HANDLER_INFO_LABEL.leaseMs)?.text ?? "not declared")
                : formatDurationMs(s.leaseMs)
            }
            hint={[
              "the Deduplicator's leaseMs",
              decl?.handlerP99Seconds != null
                ? `p99 over 1 h: ${formatQuantile(decl.handlerP99Seconds, HANDLER_TIME_BUCKETS, formatSeconds)}`
                : null,
            ]
              .filter(Boolean)
              .join(" · ")}
            testId="handler-lease"
          />
        </div>
      }
    />
  );
}
