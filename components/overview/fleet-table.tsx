"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import Link from "next/link";
import { useMemo, type KeyboardEvent } from "react";
import type { OverviewHandler } from "@/lib/api/overview";
import type { SeriesLine } from "@/lib/api/series";
import {
  FLEET_SORT_LABELS,
  FLEET_SORTS,
  fleetRows,
  fleetViewPatch,
  parseFleetView,
  type FleetRow,
  type FleetViewState,
} from "@/lib/fleet-view";
import { formatCount, formatPercent, formatRate, formatSecondsAsMs } from "@/lib/format";
import { seriesQuery } from "@/lib/query-options";
import { THRESHOLDS } from "@/lib/thresholds";
import { hrefWithView, REFRESH_MS, useViewState } from "@/lib/url-state";
import { FIELD_CLASS, LabeledSelect } from "../field";
import { useHydrated } from "../hydrated";

const SORT_CHOICES = FLEET_SORTS.map((s) => ({ value: s, label: FLEET_SORT_LABELS[s] }));

const STATE_STYLE = {
  firing: "bg-red-100 text-red-900 dark:bg-red-900/50 dark:text-red-100",
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-900/40 dark:text-amber-100",
  inactive: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900/40 dark:text-emerald-100",
} as const;

/**
 * The duplicate ratio of one handler over the URL's range as a 96 × 20 px SVG line (no chart
 * library: 200 of them must cost nothing), with the 10 % alert line as a dashed rule when in range.
 */
function Sparkline({ line }: { line: SeriesLine | undefined }) {
  const pts = (line?.points ?? []).filter((p): p is [number, number] => p[1] !== null);
  if (pts.length < 2) return <span className="inline-block w-24 text-xs text-slate-400">—</span>;
  const W = 96;
  const H = 20;
  const t0 = pts[0]![0];
  const t1 = pts[pts.length - 1]![0];
  const max = Math.max(THRESHOLDS.duplicateRatio * 1.2, ...pts.map((p) => p[1]));
  const x = (t: number) => ((t - t0) / Math.max(1, t1 - t0)) * W;
  const y = (v: number) => H - 1 - (v / max) * (H - 2);
  const d = pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
  const over = pts[pts.length - 1]![1] > THRESHOLDS.duplicateRatio;
  return (
    <svg
      width={W}
      height={H}
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label="duplicate ratio over the range"
      data-testid="sparkline"
      className="inline-block align-middle"
    >
      <line
        x1={0}
        x2={W}
        y1={y(THRESHOLDS.duplicateRatio)}
        y2={y(THRESHOLDS.duplicateRatio)}
        stroke="currentColor"
        strokeDasharray="2 2"
        className="text-red-400"
        strokeWidth={0.75}
      />
      <polyline
        points={d}
        fill="none"
        strokeWidth={1.5}
        stroke="currentColor"
        className={over ? "text-red-600 dark:text-red-400" : "text-blue-600 dark:text-blue-400"}
      />
    </svg>
  );
}

const num = "px-2 py-1.5 text-right tabular-nums whitespace-nowrap";

function Row({
  r,
  href,
  line,
  onOpen,
}: {
  r: FleetRow;
  href: string;
  line: SeriesLine | undefined;
  onOpen: (href: string) => void;
}) {
  const ratioTone =
    r.ratio === null
      ? ""
      : r.ratio > THRESHOLDS.duplicateRatio
        ? "text-red-700 dark:text-red-400 font-semibold"
        : r.ratio >= THRESHOLDS.duplicateRatioNormal
          ? "text-amber-700 dark:text-amber-400"
          : "";
  // A service whose scrape is down has no current figure: its 5-min rates would still show the last ones.
  const down = r.h.scrape?.status === "down" ? r.h.scrape.detail : null;
  const onKey = (e: KeyboardEvent<HTMLTableRowElement>) => {
    if (e.key === "Enter" && e.target === e.currentTarget) onOpen(href);
  };
  return (
    <tr
      data-testid="fleet-row"
      data-handler={r.id}
      data-state={r.alert}
      data-ratio={r.ratio ?? ""}
      tabIndex={0}
      onClick={(e) => {
        if (!(e.target as HTMLElement).closest("a")) onOpen(href);
      }}
      onKeyDown={onKey}
      className="cursor-pointer border-t border-slate-100 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-800 dark:hover:bg-slate-800/60"
    >
      <td className="px-2 py-1.5">
        <span
          className={`rounded px-1.5 py-0.5 text-xs font-medium ${STATE_STYLE[r.alert]}`}
          title={r.activeAlerts.join(", ") || "no active alert"}
        >
          {r.alert}
        </span>
      </td>
      <td className="px-2 py-1.5 whitespace-nowrap">{r.service}</td>
      <td className="px-2 py-1.5">
        <Link
          href={href}
          prefetch={false}
          className="text-blue-700 underline-offset-2 hover:underline dark:text-blue-300"
        >
          {r.handler}
        </Link>
      </td>
      <td className={`${num} ${ratioTone}`} data-testid="fleet-ratio">
        {down ? (
          <span className="text-amber-700 dark:text-amber-300" data-testid="fleet-no-scrape">
            {down}
          </span>
        ) : r.ratio === null ? (
          "no traffic"
        ) : (
          formatPercent(r.ratio)
        )}
      </td>
      <td className="px-2 py-1.5">
        <Sparkline line={line} />
      </td>
      <td className={num} title={down ?? undefined}>
        {down ? "—" : formatRate(r.rate, "msg")}
      </td>
      <td
        className={`${num} ${r.errors !== null && r.errors > THRESHOLDS.errorRate ? "text-red-700 dark:text-red-400" : ""}`}
      >
        {formatRate(r.errors, "errors")}
      </td>
      <td
        className={`${num} ${r.p99 !== null && r.p99 > THRESHOLDS.checkP99Seconds ? "text-red-700 dark:text-red-400" : ""}`}
      >
        {r.p99 === null ? "—" : formatSecondsAsMs(r.p99)}
      </td>
      <td className={num} title={r.noTtl > 0 ? `${formatCount(r.noTtl)} without TTL` : undefined}>
        {r.keys === null ? "—" : `${r.keysExact ? "" : "≈ "}${formatCount(r.keys, "")}`.trim()}
        {r.noTtl > 0 ? <span className="ml-1 text-red-700 dark:text-red-400">!</span> : null}
      </td>
      <td className="px-2 py-1.5 text-xs">{r.ttlClass ?? "—"}</td>
    </tr>
  );
}

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
        <th className="px-2 py-1 text-right font-medium">Processed</th>
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
              <Row
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
