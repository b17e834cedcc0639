"use client";

import type { CheckResult, ExpectedCheck, GuaranteeRun, RunView, ScenarioInfo } from "@/lib/api/workshop";
import { GUARANTEE_LABEL, guaranteeDetail, guaranteeHeadline } from "@/lib/guarantee-words";
import { checkText } from "./run-view";

/** One expected check under a guarantee's tile: "expected Duplicate side effects > 0 ✓", or that it was not evaluated. */
function CheckLine({ c, result }: { c: ExpectedCheck; result: CheckResult | undefined }) {
  const mark = !result ? "" : result.ok === true ? " ✓" : result.ok === false ? " ✗" : " — not evaluated";
  return (
    <dd className="text-sm">
      expected {checkText({ ...c, guarantee: undefined })}
      {mark}
    </dd>
  );
}

/** One guarantee's tile: its duplicate side effects measured in the run, or "not run: <reason>". */
function GuaranteeTile({ g, scenario, run }: { g: GuaranteeRun; scenario: ScenarioInfo; run: RunView }) {
  const expected = scenario.expected.checks.filter((c) => c.guarantee === g.guarantee);
  const results = run.outcome?.checks.filter((c) => c.guarantee === g.guarantee) ?? [];
  const bad = results.some((c) => c.ok === false);
  const measured = g.status === "measured";
  return (
    <div
      data-testid={`guarantee-${g.guarantee}`}
      data-status={g.status}
      className={`rounded-lg border p-3 ${bad ? "border-red-400 dark:border-red-700" : measured && results.length ? "border-emerald-400 dark:border-emerald-700" : "border-slate-200 dark:border-slate-800"}`}
    >
      <dt className="text-base font-semibold">{GUARANTEE_LABEL[g.guarantee]}</dt>
      <dd className="text-sm text-slate-500 dark:text-slate-400">{g.setup}</dd>
      {measured ? (
        <>
          <dd className="mt-1 text-sm text-slate-600 dark:text-slate-300">Side effects performed twice</dd>
          <dd data-testid={`guarantee-${g.guarantee}-duplicates`} className="text-5xl font-bold tabular-nums">
            {guaranteeHeadline(g)}
          </dd>
          <dd className="text-sm">{guaranteeDetail(g)}</dd>
          <dd className="text-xs text-slate-500 dark:text-slate-400">counted from {g.countedBy}</dd>
        </>
      ) : (
        <dd data-testid={`guarantee-${g.guarantee}-duplicates`} className="mt-2 text-lg font-semibold">
          {guaranteeHeadline(g)}
        </dd>
      )}
      {expected.map((c, i) => (
        <CheckLine key={i} c={c} result={results[i]} />
      ))}
    </div>
  );
}

/** The guarantees a run compared (the crash storm), side by side; nothing for the other scenarios. */
export function GuaranteeTiles({ run, scenario }: { run: RunView; scenario: ScenarioInfo }) {
  if (!run.guarantees) return null;
  return (
    <dl data-testid="guarantee-tiles" className="grid gap-3 sm:grid-cols-3">
      {run.guarantees.map((g) => (
        <GuaranteeTile key={g.guarantee} g={g} scenario={scenario} run={run} />
      ))}
    </dl>
  );
}
