"use client";

import type { DeliveryVerdict, ExpectedCheck, RunView, SummaryField } from "@/lib/api/workshop";
import { formatNumber } from "@/lib/format";
import { GUARANTEE_LABEL } from "@/lib/guarantee-words";
import { timelineHeading } from "@/lib/workshop-format";

/** Summary fields in display order (as lib/api/workshop.ts SUMMARY_FIELDS; repeated to keep zod out of the bundle). */
export const FIELDS = [
  "published",
  "records",
  "deliveries",
  "handlerCalls",
  "deduplicated",
  "sideEffects",
  "duplicateSideEffects",
  "lost",
  "dlq",
] as const satisfies readonly SummaryField[];
export const FIELD_LABEL: Record<SummaryField, string> = {
  published: "Published events",
  records: "Records on the topic",
  deliveries: "Deliveries",
  handlerCalls: "Handler calls",
  deduplicated: "Deduplicated",
  sideEffects: "Side effects",
  duplicateSideEffects: "Duplicate side effects",
  lost: "Lost",
  dlq: "In DLQ",
};
export const OP: Record<ExpectedCheck["op"], string> = { eq: "=", gt: ">", gte: "≥", lte: "≤" };

const VERDICT_TONE: Record<DeliveryVerdict, string> = {
  processed: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900/40 dark:text-emerald-100",
  deduplicated: "bg-blue-100 text-blue-900 dark:bg-blue-900/40 dark:text-blue-100",
  "in-progress": "bg-slate-200 text-slate-800 dark:bg-slate-700 dark:text-slate-100",
  error: "bg-amber-100 text-amber-900 dark:bg-amber-900/40 dark:text-amber-100",
  poisoned: "bg-red-100 text-red-900 dark:bg-red-900/50 dark:text-red-100",
};

/** A check's text: `lost = 0`; a guarantee's check names it: `Redis dedup: Duplicate side effects > 0`. */
export function checkText(c: Pick<ExpectedCheck, "field" | "op" | "value" | "guarantee">): string {
  const of = c.guarantee ? `${GUARANTEE_LABEL[c.guarantee]}: ` : "";
  return `${of}${FIELD_LABEL[c.field]} ${OP[c.op]} ${formatNumber(c.value)}`;
}

/** The delivery timeline, newest first: uuid, replica, attempt, verdict. */
export function Timeline({ run }: { run: RunView }) {
  const t0 = Date.parse(run.startedAt);
  const rows = [...run.timeline].reverse();
  return (
    <div>
      <p className="mb-1 text-sm text-slate-600 dark:text-slate-300" aria-live="polite">
        {timelineHeading(run)}
      </p>
      <div
        className="max-h-[28rem] overflow-y-auto rounded border border-slate-200 dark:border-slate-800"
        tabIndex={0}
        aria-label="Delivery timeline"
      >
        <table className="w-full text-base" data-testid="timeline">
          <caption className="sr-only">Deliveries of this run, newest first</caption>
          <thead className="sticky top-0 bg-slate-100 text-left text-sm dark:bg-slate-800">
            <tr>
              <th scope="col" className="px-2 py-1 font-medium">
                +time
              </th>
              <th scope="col" className="font-medium">
                Message UUID
              </th>
              <th scope="col" className="font-medium">
                Replica
              </th>
              <th scope="col" className="text-right font-medium">
                Attempt
              </th>
              <th scope="col" className="pl-3 font-medium">
                Verdict
              </th>
              <th scope="col" className="font-medium">
                Note
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((e, i) => (
              <tr
                key={`${e.at}-${e.uuid}-${e.attempt}-${i}`}
                data-testid="timeline-row"
                className="border-t border-slate-100 dark:border-slate-800"
              >
                <td className="px-2 py-0.5 tabular-nums text-sm text-slate-500">
                  {((Date.parse(e.at) - t0) / 1000).toFixed(2)} s
                </td>
                <td className="font-mono text-sm" title={e.uuid}>
                  …{e.uuid.slice(-10)}
                </td>
                <td className="text-sm">{e.replica}</td>
                <td className="text-right tabular-nums">{e.attempt}</td>
                <td className="pl-3">
                  <span className={`rounded px-2 py-0.5 text-sm font-medium ${VERDICT_TONE[e.verdict]}`}>
                    {e.verdict}
                  </span>
                </td>
                <td className="text-sm text-slate-600 dark:text-slate-300">{e.note ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/**
 * The line over the run's counters: how many series counted something, or — when the view holds none
 * — that none were read (yet), never "0 series" under tiles that count (the tiles are the run's probe).
 */
export function runSeriesSummary(run: Pick<RunView, "series" | "status">): string {
  const n = run.series.filter((x) => x.value > 0).length;
  if (n > 0)
    return `Run counters from the workshop registry (${formatNumber(n)} series above 0; not exported to Prometheus)`;
  return run.status === "running"
    ? "Run counters from the workshop registry: none counted yet (the tiles above are the run's own probe)"
    : "Run counters from the workshop registry: none kept for this run (the tiles above are the run's own probe)";
}

/**
 * The run's own counters as the middleware counted them, from the workshop's registry (never
 * served on `/api/metrics`): one row per series, labels other than `service` and `topic` shown.
 */
export function RunSeriesTable({ run }: { run: Pick<RunView, "series" | "status"> }) {
  const rows = run.series.filter((x) => x.value > 0);
  return (
    <details data-testid="run-series" className="text-sm">
      <summary className="cursor-pointer text-slate-600 dark:text-slate-300">{runSeriesSummary(run)}</summary>
      <table className="mt-1 w-full text-left">
        <tbody>
          {rows.map((x) => (
            <tr
              key={`${x.name}${JSON.stringify(x.labels)}`}
              className="border-t border-slate-100 dark:border-slate-800"
            >
              <td className="py-0.5 font-mono">{x.name}</td>
              <td className="font-mono text-slate-500">
                {Object.entries(x.labels)
                  .filter(([k]) => k !== "service" && k !== "topic")
                  .map(([k, v]) => `${k}=${v}`)
                  .join(" ")}
              </td>
              <td className="text-right tabular-nums">{formatNumber(x.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
