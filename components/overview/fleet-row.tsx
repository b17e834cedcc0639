"use client";

/** One row of the fleet table: a handler's alert state, names, figures and duplicate-ratio sparkline. */
import Link from "next/link";
import type { KeyboardEvent } from "react";
import type { SeriesLine } from "@/lib/api/series";
import type { FleetRow } from "@/lib/fleet-view";
import { formatCount, formatPercent, formatRate, formatSecondsAsMs } from "@/lib/format";
import { THRESHOLDS } from "@/lib/thresholds";
import { bucketText } from "@/lib/quantile-bucket";
import { CHECK_DURATION_BUCKETS } from "@/names/buckets";

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

/** One handler's row: its alert state, service and handler (a link), then its figures; the whole row opens the handler page. */
export function FleetTableRow({
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
      <RowFigures r={r} down={down} line={line} />
    </tr>
  );
}

/** The ratio tone: red over the alert threshold, amber over the normal band, none otherwise (or without traffic). */
function ratioTone(ratio: number | null): string {
  return ratio === null
    ? ""
    : ratio > THRESHOLDS.duplicateRatio
      ? "text-red-700 dark:text-red-400 font-semibold"
      : ratio >= THRESHOLDS.duplicateRatioNormal
        ? "text-amber-700 dark:text-amber-400"
        : "";
}

/** A row's figure cells: duplicate ratio and its sparkline, processed rate, errors, p99, keys, TTL class (`down`: why the scrape is down). */
function RowFigures({ r, down, line }: { r: FleetRow; down: string | null; line: SeriesLine | undefined }) {
  return (
    <>
      <td className={`${num} ${ratioTone(r.ratio)}`} data-testid="fleet-ratio">
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
        title={bucketText(r.p99, CHECK_DURATION_BUCKETS) ?? undefined}
      >
        {r.p99 === null ? "—" : formatSecondsAsMs(r.p99)}
      </td>
      <td className={num} title={r.noTtl > 0 ? `${formatCount(r.noTtl)} without TTL` : undefined}>
        {r.keys === null ? "—" : `${r.keysExact ? "" : "≈ "}${formatCount(r.keys, "")}`.trim()}
        {r.noTtl > 0 ? <span className="ml-1 text-red-700 dark:text-red-400">!</span> : null}
      </td>
      <td className="px-2 py-1.5 text-xs">{r.ttlClass ?? "—"}</td>
    </>
  );
}
