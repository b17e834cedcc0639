"use client";

import { RATE_WINDOW_MS } from "@/lib/alert-exprs";
import { SeriesLegend } from "../charts/series-legend";
import { SeriesPanel } from "../charts/series-panel";

/** What each lease counter means, in the order of the `lease_events` series. */
const LEASE_LEGEND = [
  {
    name: "lease lost",
    color: "#ef4444",
    text: "a success after another consumer took the expired lease: the message may have run twice (pages: DedupLeaseLost)",
  },
  {
    name: "in progress",
    color: "#f59e0b",
    text: "an attempt that met another consumer's live lease (retried, InProgressError)",
  },
  {
    name: "released",
    color: "#64748b",
    text: "a key released after a failed attempt, so that the retry runs the handler again",
  },
] as const;

/**
 * The handler's lease counters (`deduplication_lease_lost_total`, `_in_progress_total`,
 * `_released_total`) as events/s with their count over the rate window; lease lost is the one that pages.
 */
export function LeaseEvents({ service, handler }: { service: string; handler: string }) {
  // Line names are "<query name> <service> / <handler>" (server/observe/routes/series.ts).
  const colors = Object.fromEntries(LEASE_LEGEND.map((l) => [`${l.name} ${service} / ${handler}`, l.color]));
  return (
    <SeriesPanel
      title="Leases"
      description="events/s: lease lost (pages at any), in progress, released"
      metric="lease_events"
      service={service}
      handler={handler}
      colors={colors}
      testId="chart-lease-events"
      emptyText="no lease counter for this handler (it has no Deduplicator with a registry, or has not been registered)."
      burst={{ windowMs: RATE_WINDOW_MS, what: "event" }}
      footer={<SeriesLegend entries={LEASE_LEGEND} testId="lease-legend" />}
    />
  );
}
