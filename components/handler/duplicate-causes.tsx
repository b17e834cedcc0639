"use client";

import { DUPLICATE_CAUSE_LEGEND as CAUSE_LEGEND } from "@/lib/chart-data";
import { RATE_WINDOW_MS } from "@/lib/alert-exprs";
import { SeriesLegend } from "../charts/series-legend";
import { SeriesPanel } from "../charts/series-panel";

const COLORS = Object.fromEntries(Object.entries(CAUSE_LEGEND).map(([k, v]) => [k, v.color]));
const LEGEND = Object.values(CAUSE_LEGEND).map((c) => ({ name: c.title, color: c.color, text: c.text }));

/** Stacked swallowed duplicates/s of one handler by cause, with what each cause means. */
export function DuplicateCauses({ service, handler }: { service: string; handler: string }) {
  return (
    <SeriesPanel
      title="Duplicates by cause"
      description="swallowed duplicates/s (stacked): which side sends the copies"
      metric="duplicates_by_cause"
      service={service}
      handler={handler}
      stacked
      colors={COLORS}
      testId="chart-duplicate-causes"
      emptyText="no duplicate swallowed (messages_duplicates_by_cause_total has no series for this handler)."
      burst={{ windowMs: RATE_WINDOW_MS, what: "duplicate" }}
      footer={<SeriesLegend entries={LEGEND} testId="cause-legend" />}
    />
  );
}
