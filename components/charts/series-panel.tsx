"use client";

import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import type { SeriesMetric } from "@/lib/api/series";
import { hasNoData } from "@/lib/chart-data";
import { eventsQuery, seriesQuery } from "@/lib/query-options";
import type { ChartMarker } from "./markers";
import { RANGE_LABELS } from "@/lib/ranges";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { EmptyState, Panel, UnavailableState } from "../panel";
import { QueryView } from "../query-state";
import { TimeSeriesChart } from "./lazy";
import type { ChartThreshold } from "./chart-common";
import { withHiddenWords } from "@/lib/format";

/** Props of {@link SeriesPanel}. */
export interface SeriesPanelProps {
  title: string;
  description?: string;
  metric: SeriesMetric;
  service?: string;
  handler?: string;
  alert?: ChartThreshold | null;
  normal?: ChartThreshold | null;
  stacked?: boolean;
  height?: number;
  testId?: string;
  colors?: Record<string, string>;
  /** What an empty answer means for this metric (default: no traffic). */
  emptyText?: string;
  /**
   * Draw only the lines with these labels, from the unfiltered query (one request for every
   * handler of the overview, sent in parallel with the overview itself instead of after it).
   */
  pick?: Record<string, string>;
  /** Show the last rate as a count over the window too (rare events: errors, DLQ). */
  burst?: { windowMs: number; what: string };
  /** Drawn under the chart in every state (e.g. what each series means). */
  footer?: ReactNode;
  /** Draw the event markers of the range (GET /api/events) for this service / handler. */
  markers?: boolean;
}

/** The event markers of the URL's range for this service / handler (GET /api/events); asked only when `enabled`. */
function useEventMarkers(
  scope: { service: string | undefined; handler: string | undefined },
  enabled: boolean,
): ChartMarker[] {
  const { view } = useViewState();
  const ev = useQuery({ ...eventsQuery({ range: view.range, ...scope }, REFRESH_MS[view.refresh]), enabled });
  return (ev.data?.events ?? []).map((e) => ({
    t: Date.parse(e.at) / 1000,
    kind: e.kind,
    title: withHiddenWords(e.title),
  }));
}

/** "no scrape since 14:02:11 UTC" over a chart whose service's series went stale: its lines stop there. */
function NoScrape({ detail }: { detail: string }) {
  return (
    <p className="text-xs font-medium text-amber-700 dark:text-amber-300" data-testid="no-scrape">
      {detail}
    </p>
  );
}

/** A panel that loads one named series for the URL's range and draws it with its thresholds. */
export function SeriesPanel({
  title,
  description,
  metric,
  service,
  handler,
  alert,
  normal,
  stacked,
  height = 180,
  testId,
  colors,
  emptyText,
  pick,
  burst,
  footer,
  markers = false,
}: SeriesPanelProps) {
  const { view } = useViewState();
  const q = useQuery(seriesQuery({ metric, range: view.range, service, handler }, REFRESH_MS[view.refresh]));
  const marks = useEventMarkers({ service: service ?? pick?.service, handler: handler ?? pick?.handler }, markers);
  const withDate = view.range === "24h" || view.range === "7d";
  return (
    <Panel title={title} description={description} testId={testId}>
      <QueryView query={q} what={title} height={height + 40}>
        {(d) => {
          if (d.data.status === "unavailable")
            return (
              <UnavailableState
                detail={d.data.detail}
                fallback={d.source === "prometheus" ? "Prometheus" : "Metrics"}
                height={height + 40}
              />
            );
          if (d.data.status === "unknown")
            return (
              <EmptyState height={height + 40}>
                <span data-testid="not-measured" data-metric={d.data.metric}>
                  {d.data.detail}
                </span>
              </EmptyState>
            );
          const down = d.scrape?.status === "down" ? <NoScrape detail={d.scrape.detail} /> : null;
          const series = pick
            ? d.data.series.filter((l) => Object.entries(pick).every(([k, v]) => l.labels[k] === v))
            : d.data.series;
          if (hasNoData(series))
            return (
              <EmptyState height={height + 40}>
                {down}
                {RANGE_LABELS[view.range]}:{" "}
                {emptyText ??
                  `no samples, no traffic for ${handler ?? pick?.handler ?? service ?? pick?.service ?? "this selection"} yet.`}
              </EmptyState>
            );
          return (
            <>
              {down}
              <TimeSeriesChart
                lines={series}
                unit={d.unit}
                label={title}
                alert={alert ?? null}
                normal={normal ?? null}
                stacked={stacked ?? false}
                height={height}
                withDate={withDate}
                {...(colors ? { colors } : {})}
                {...(burst ? { burst } : {})}
                {...(markers ? { markers: marks } : {})}
              />
            </>
          );
        }}
      </QueryView>
      {footer}
    </Panel>
  );
}
