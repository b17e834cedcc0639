"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useMemo } from "react";
import type { OverviewHandler } from "@/lib/api/overview";
import type { SeriesLine } from "@/lib/api/series";
import {
  FLEET_SORT_LABELS,
  FLEET_SORTS,
  fleetRows,
  fleetViewPatch,
  parseFleetView,
  type FleetViewState,
} from "@/lib/fleet-view";
import { seriesQuery } from "@/lib/query-options";
import { hrefWithView, REFRESH_MS, useViewState } from "@/lib/url-state";
import { FIELD_CLASS, LabeledSelect } from "../field";
import { useHydrated } from "../hydrated";
import { FleetTableRow } from "./fleet-row";

const SORT_CHOICES = FLEET_SORTS.map((s) => ({ value: s, label: FLEET_SORT_LABELS[s] }));

/** The service filter, the handler search and the sort, each written to the URL. */
function FleetControls({
  fv,
  services,
  onView,
}: {
  fv: FleetViewState;
  services: readonly string[];
  onView: (patch: Partial<FleetViewState>) => void;
}) {
  // The table arrives painted by the server; its controls work once React has hydrated it, so
  // until then they say so (disabled) instead of taking a choice that nothing would apply.
  const ready = useHydrated();
  return (
    <>
      <LabeledSelect
        label="Service"
        testId="fleet-service"
        disabled={!ready}
        value={fv.service ?? ""}
        options={[
          { value: "", label: `All services (${services.length})` },
          ...services.map((s) => ({ value: s, label: s })),
        ]}
        onChange={(v) => onView({ service: v || null })}
      />
      <label className="flex items-center gap-2 text-sm">
        <span>Search</span>
        <input
          type="search"
          data-testid="fleet-search"
          disabled={!ready}
          placeholder="service/handler"
          defaultValue={fv.search}
          onChange={(e) => onView({ search: e.target.value })}
          className={`w-40 ${FIELD_CLASS}`}
        />
      </label>
      <LabeledSelect
        label="Sort"
        testId="fleet-sort"
        disabled={!ready}
        value={fv.sort}
        options={SORT_CHOICES}
        onChange={(sort) => onView({ sort })}
      />
    </>
  );
}

/** The column heads of the fleet table. */
function FleetHead() {
  return (
    <thead className="text-left text-xs text-slate-500 dark:text-slate-400">
      <tr>
        <th className="px-2 py-1 font-medium">Alert</th>
        <th className="px-2 py-1 font-medium">Service</th>
        <th className="px-2 py-1 font-medium">Handler</th>
        <th className="px-2 py-1 text-right font-medium">Duplicates (5 min)</th>
        <th className="px-2 py-1 font-medium">over the range</th>
        <th className="px-2 py-1 text-right font-medium">Processed (5 min)</th>
        <th className="px-2 py-1 text-right font-medium">Errors (service)</th>
        <th className="px-2 py-1 text-right font-medium">p99 (service)</th>
        <th className="px-2 py-1 text-right font-medium">Keys</th>
        <th className="px-2 py-1 font-medium">TTL class</th>
      </tr>
    </thead>
  );
}

/** Every handler's duplicate ratio over the URL's range, by `service/handler`, from one `duplicate_ratio` series request. */
function useRatioLines(): Map<string, SeriesLine> {
  const { view } = useViewState();
  const series = useQuery(seriesQuery({ metric: "duplicate_ratio", range: view.range }, REFRESH_MS[view.refresh]));
  return useMemo(() => {
    const m = new Map<string, SeriesLine>();
    const d = series.data?.data;
    if (d?.status === "ok")
      for (const l of d.series)
        if (l.labels.service && l.labels.handler)
          m.set(`${l.labels.service}/${l.labels.handler}`, m.get(`${l.labels.service}/${l.labels.handler}`) ?? l);
    return m;
  }, [series.data]);
}

/**
 * The overview of a fleet: one row per service/handler with its duplicate ratio (and a sparkline
 * of it over the range), processed rate, its service's errors and check p99, keys, TTL class and
 * alert state. Worst first by default; the sort, the service filter and the handler search live in
 * the URL (`sort`, `service`, `q`). A row opens the handler page. Data: the overview answer and one
 * `duplicate_ratio` series request for all handlers (the same fixed set of Prometheus queries,
 * whatever the fleet's size).
 */
export function FleetTable({ handlers }: { handlers: readonly OverviewHandler[] }) {
  const { params, set } = useViewState();
  const router = useRouter();
  const fv = parseFleetView(params);
  const rows = useMemo(() => fleetRows(handlers, fv), [handlers, fv.sort, fv.service, fv.search]); // eslint-disable-line react-hooks/exhaustive-deps
  const services = useMemo(() => [...new Set(handlers.map((h) => h.service))].sort(), [handlers]);
  const lines = useRatioLines();
  const open = (href: string) => router.push(href);
  const counts = { firing: 0, pending: 0 };
  for (const r of rows) if (r.alert !== "inactive") counts[r.alert] += 1;
  return (
    <section
      aria-labelledby="fleet-h"
      data-testid="fleet-table"
      className="space-y-3 rounded-lg border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900"
    >
      <header className="flex flex-wrap items-center gap-x-4 gap-y-2">
        <h2 id="fleet-h" className="text-base font-semibold">
          Handlers <span data-testid="fleet-count">{rows.length}</span> of {handlers.length}
        </h2>
        <span className="text-xs text-slate-500 dark:text-slate-400">
          {counts.firing} firing · {counts.pending} pending
        </span>
        <FleetControls fv={fv} services={services} onView={(patch) => set(fleetViewPatch(patch))} />
      </header>
      <div className="overflow-x-auto">
        <table className="w-full text-sm">
          <FleetHead />
          <tbody>
            {rows.map((r) => (
              <FleetTableRow
                key={r.id}
                r={r}
                line={lines.get(r.id)}
                onOpen={open}
                href={hrefWithView(
                  `/handlers/${encodeURIComponent(r.service)}/${encodeURIComponent(r.handler)}`,
                  params,
                )}
              />
            ))}
          </tbody>
        </table>
        {rows.length === 0 ? (
          <p data-state="empty" className="py-3 text-sm text-slate-500 dark:text-slate-400">
            No handler matches {fv.service ? `service ${fv.service}` : ""} {fv.search ? `“${fv.search}”` : ""}.
          </p>
        ) : null}
      </div>
    </section>
  );
}
