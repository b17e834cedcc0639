"use client";

import { MARKER_INFO, MARKER_KINDS, type MarkerKind } from "@/lib/api/events";
import { formatInstant } from "@/lib/clock-time";

/** One event drawn on a time-series chart: a vertical line at `t` with a hover text. */
export interface ChartMarker {
  /** Unix seconds (the charts' time axis). */
  t: number;
  kind: MarkerKind;
  /** What happened (the hover text). */
  title: string;
}

/**
 * The flag at the top of a marker line (recharts passes the line's `viewBox`); its SVG `<title>`
 * is the hover text, so it needs no tooltip machinery and works with a keyboard-free hover.
 */
export function MarkerFlag({ viewBox, marker }: { viewBox?: { x?: number; y?: number }; marker: ChartMarker }) {
  const x = viewBox?.x ?? 0;
  const y = viewBox?.y ?? 0;
  const color = MARKER_INFO[marker.kind].color;
  return (
    <g data-testid="chart-marker" data-kind={marker.kind} data-at={marker.t} className="cursor-help">
      <title>{`${formatInstant(marker.t * 1000)} — ${marker.title}`}</title>
      <path d={`M${x - 5},${y} L${x + 5},${y} L${x},${y + 7} Z`} fill={color} />
      {/* A wider invisible target than the 1 px line, so hovering finds the text. */}
      <rect x={x - 5} y={y} width={10} height={24} fill="transparent" />
    </g>
  );
}

/** The legend of the kinds of marker a chart shows. */
export function MarkerLegend({ markers }: { markers: readonly ChartMarker[] }) {
  const kinds = MARKER_KINDS.filter((k) => markers.some((m) => m.kind === k));
  if (kinds.length === 0) return null;
  return (
    <ul
      data-testid="marker-legend"
      aria-label="Event markers"
      className="mt-1 flex flex-wrap gap-x-3 gap-y-0.5 text-xs text-slate-500 dark:text-slate-400"
    >
      {kinds.map((k) => (
        <li key={k} className="flex items-center gap-1">
          <span aria-hidden style={{ color: MARKER_INFO[k].color }}>
            ▼
          </span>
          {MARKER_INFO[k].label} ({markers.filter((m) => m.kind === k).length})
        </li>
      ))}
    </ul>
  );
}
