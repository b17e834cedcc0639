"use client";

import type { RunView, ScenarioInfo } from "@/lib/api/workshop";
import { formatNumber } from "@/lib/format";
import { tileLabel, tileNote } from "@/lib/workshop-format";
import { FIELD_LABEL, FIELDS, OP } from "./run-view";

/** The run's state: running (its counts provisional), done or failed, and the outcome once known. */
function RunState({ run }: { run: RunView }) {
  return (
    <div className="flex flex-wrap items-center gap-3">
      <span
        data-testid="run-status"
        data-status={run.status}
        className={`rounded px-3 py-1 text-lg font-semibold ${run.status === "running" ? "bg-blue-100 text-blue-900 dark:bg-blue-900/50 dark:text-blue-100" : run.status === "failed" ? "bg-red-100 text-red-900 dark:bg-red-900/50 dark:text-red-100" : "bg-slate-200 dark:bg-slate-700"}`}
      >
        {run.status === "running" ? "Running…" : run.status === "done" ? "Done" : "Failed"}
      </span>
      {run.status === "running" ? (
        <span data-testid="run-provisional" className="text-lg text-slate-700 dark:text-slate-200">
          Provisional: counts so far, checked against the expected outcome when the run has settled
          {run.pace === "narrated" ? " · narrated pace, one message every 0.25 s" : ""}
        </span>
      ) : null}
      {run.outcome ? (
        <span
          data-testid="run-outcome"
          data-met={run.outcome.met}
          className={`rounded px-3 py-1 text-lg font-semibold ${run.outcome.met ? "bg-emerald-100 text-emerald-900 dark:bg-emerald-900/50 dark:text-emerald-100" : "bg-red-100 text-red-900 dark:bg-red-900/50 dark:text-red-100"}`}
        >
          {run.outcome.met ? "✓ As expected" : "✗ Not as expected"}
        </span>
      ) : null}
      {run.error ? (
        <span role="alert" className="text-sm text-red-700 dark:text-red-300">
          {run.error}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The run's numbers next to what the scenario expects, in projector-size type. While the run is
 * running every tile is marked provisional ("so far"; "Lost" reads "Not handled yet") and its
 * expectation waits for the end, so a mid-run "Lost 60 / expected 0" never reads as a failure.
 */
export function RunSummary({ run, scenario }: { run: RunView; scenario: ScenarioInfo }) {
  const checks = run.outcome?.checks ?? null;
  const running = run.status === "running";
  return (
    <div data-testid="run-summary" className="space-y-3">
      <RunState run={run} />
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4">
        {FIELDS.map((f) => {
          // A guarantee's checks are on its own tile (guarantee-tiles.tsx), not on the run's.
          const expect = scenario.expected.checks.filter((c) => c.field === f && !c.guarantee);
          const result = checks?.filter((c) => c.field === f && !c.guarantee) ?? [];
          const bad = result.some((c) => !c.ok);
          const note = tileNote(f, run);
          return (
            <div
              key={f}
              data-testid={`summary-${f}`}
              data-provisional={running}
              className={`rounded-lg border p-3 ${running ? "border-dashed " : ""}${expect.length ? (bad ? "border-red-400 dark:border-red-700" : result.length ? "border-emerald-400 dark:border-emerald-700" : "border-blue-300 dark:border-blue-800") : "border-slate-200 dark:border-slate-800"}`}
            >
              <dt className="text-base text-slate-600 dark:text-slate-300">{tileLabel(FIELD_LABEL[f], f, run)}</dt>
              <dd
                className={`text-5xl font-bold tabular-nums leading-tight ${running ? "text-slate-500 dark:text-slate-400" : ""}`}
              >
                {formatNumber(run.summary[f])}
              </dd>
              {expect.map((c, i) => (
                <dd key={i} className="text-base">
                  expected {OP[c.op]} {formatNumber(c.value)}
                  {running ? " at the end" : result[i] ? (result[i].ok ? " ✓" : " ✗") : ""}
                </dd>
              ))}
              {note ? (
                <dd data-testid={`note-${f}`} className="mt-1 text-sm text-slate-600 dark:text-slate-300">
                  {note}
                </dd>
              ) : null}
            </div>
          );
        })}
      </dl>
    </div>
  );
}
