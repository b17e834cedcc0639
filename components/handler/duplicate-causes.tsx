"use client";

import { DUPLICATE_CAUSE_LEGEND as CAUSE_LEGEND } from "@/lib/chart-data";
import { RATE_WINDOW_MS } from "@/lib/thresholds";
import { SeriesPanel } from "../charts/series-panel";

const COLORS = Object.fromEntries(Object.entries(CAUSE_LEGEND).map(([k, v]) => [k, v.color]));

/** Stacked swallowed duplicates/s of one handler by cause, with what each cause means. */
export function DuplicateCauses({ service, handler }: { service: string; handler: string }) {
  return (
    <SeriesPanel
      title="Duplicates by cause"
      description="swallowed duplicates/s (stacked): which side sends the copies"
      metric="duplicates_by_cause"
      service={service}
      handler={handler}
      unit="per_second"
      stacked
      colors={COLORS}
      testId="chart-duplicate-causes"
      emptyText="no duplicate swallowed (messages_duplicates_by_cause_total has no series for this handler)."
      burst={{ windowMs: RATE_WINDOW_MS, what: "duplicate" }}
      footer={
        <dl data-testid="cause-legend" className="mt-2 space-y-1 text-xs text-slate-600 dark:text-slate-300">
          {Object.entries(CAUSE_LEGEND).map(([k, c]) => (
            <div key={k} className="flex gap-2">
              <dt className="shrink-0 font-medium">
                <span aria-hidden className="mr-1 inline-block h-2 w-3 rounded-sm align-middle" style={{ background: c.color }} />
                {c.title}
              </dt>
              <dd>{c.text}</dd>
            </div>
          ))}
        </dl>
      }
    />
  );
}
