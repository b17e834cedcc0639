"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import type { ScenarioInfo, ScenarioKind, ScenarioList } from "@/lib/api/workshop";
import { formatDurationMs } from "@/lib/format";
import { runQuery, scenariosQuery, ApiError } from "@/lib/query-options";
import { ErrorState, LoadingState, Panel } from "../panel";
import { errorTitle, QueryView } from "../query-state";
import { ReplicaAssignment } from "../replica-assignment";
import { GuaranteeTiles } from "./guarantee-tiles";
import { LiveDemo } from "./live-demo";
import { checkText, RunSeriesTable, Timeline } from "./run-view";
import { RunSummary } from "./run-summary";
import { needsToken, useWorkshopToken } from "./token";
import { TokenField } from "./token-field";
import { useRunning, useShownScenario, useStartRun } from "./use-workshop-run";
import { boundAt, PacePicker, paceLine } from "./pace-picker";
import type { RunPace } from "@/lib/api/workshop";

const KIND_LABEL: Record<ScenarioKind, string> = {
  "duplicate-source": "Duplicate sources, correct setup",
  "redis-outage": "Redis outage",
  "anti-pattern": "Anti-patterns",
  guarantees: "Stronger guarantees",
};

function ScenarioPicker({
  scenarios,
  selected,
  onSelect,
}: {
  scenarios: readonly ScenarioInfo[];
  selected: string | null;
  onSelect: (n: string) => void;
}) {
  const kinds = [...new Set(scenarios.map((s) => s.kind))];
  return (
    <div role="radiogroup" aria-label="Scenario" className="space-y-3">
      {kinds.map((k) => (
        <fieldset key={k}>
          <legend className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500 dark:text-slate-400">
            {KIND_LABEL[k]}
          </legend>
          <ul className="space-y-0.5">
            {scenarios
              .filter((s) => s.kind === k)
              .map((s) => (
                <li key={s.name}>
                  <label
                    className={`flex cursor-pointer items-start gap-2 rounded px-2 py-1 text-base hover:bg-slate-100 dark:hover:bg-slate-800 ${selected === s.name ? "bg-blue-50 font-semibold dark:bg-blue-950" : ""}`}
                  >
                    <input
                      type="radio"
                      name="scenario"
                      value={s.name}
                      checked={selected === s.name}
                      onChange={() => onSelect(s.name)}
                      data-testid={`scenario-${s.name}`}
                      className="mt-1.5"
                    />
                    <span className="min-w-0">{s.title}</span>
                    {s.runningRunId ? (
                      <span className="ml-auto text-xs text-blue-700 dark:text-blue-300">running</span>
                    ) : null}
                  </label>
                </li>
              ))}
          </ul>
        </fieldset>
      ))}
    </div>
  );
}

function RunPanel({ runId, scenario }: { runId: string; scenario: ScenarioInfo }) {
  const q = useQuery(runQuery(runId));
  const qc = useQueryClient();
  const status = q.data?.status;
  // When the run ends, the scenario list (running / last run) is stale: refetch it now.
  useEffect(() => {
    if (!status || status === "running") return;
    qc.setQueryData<ScenarioList>(scenariosQuery().queryKey, (old) =>
      old
        ? {
            ...old,
            scenarios: old.scenarios.map((s) =>
              s.runningRunId === runId ? { ...s, runningRunId: null, lastRunId: runId } : s,
            ),
          }
        : old,
    );
    void qc.invalidateQueries({ queryKey: scenariosQuery().queryKey });
  }, [status, qc, runId]);
  if (q.isPending) return <LoadingState label="Starting the run…" height={200} />;
  if (q.isError && !q.data)
    return (
      <ErrorState
        title={errorTitle(q.error, "Run")}
        detail={q.error instanceof ApiError ? q.error.detail : String(q.error)}
        height={200}
      />
    );
  const run = q.data!;
  return (
    <div className="space-y-4">
      <RunSummary run={run} scenario={scenario} />
      <GuaranteeTiles run={run} scenario={scenario} />
      <Timeline run={run} />
      <RunSeriesTable run={run} />
    </div>
  );
}

/** What the scenario expects: its summary and each check with its reason. */
function ExpectedOutcome({ scenario }: { scenario: ScenarioInfo }) {
  return (
    <div className="mt-3 rounded-lg bg-slate-100 p-3 dark:bg-slate-800" data-testid="expected">
      <h3 className="text-base font-semibold">Expected: {scenario.expected.summary}</h3>
      <ul className="mt-1 list-disc pl-5 text-base">
        {scenario.expected.checks.map((c, i) => (
          <li key={i}>
            <strong>{checkText(c)}</strong> — {c.because}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The picked scenario: what it shows, what to expect, and its Run button with why a start failed (`error`; a 409 is no failure: that run is watched). */
function ScenarioDetail({
  scenario,
  running,
  onRun,
  error,
  pace,
  onPace,
}: {
  scenario: ScenarioInfo;
  running: boolean;
  onRun: () => void;
  error: Error | null;
  pace: RunPace;
  onPace: (p: RunPace) => void;
}) {
  return (
    <Panel title={<span className="text-2xl">{scenario.title}</span>} testId="scenario-detail">
      <p className="max-w-prose text-lg leading-relaxed">{scenario.explanation}</p>
      <p className="mt-2 text-sm text-slate-500 dark:text-slate-400">
        Spec {scenario.specSections} · at most {formatDurationMs(boundAt(scenario, pace))} at the {pace} pace
      </p>
      <ExpectedOutcome scenario={scenario} />
      <div className="mt-4 flex flex-wrap items-center gap-4">
        <PacePicker pace={pace} onPace={onPace} />
        <button
          type="button"
          data-testid="run-button"
          onClick={onRun}
          disabled={running}
          className="rounded-lg bg-blue-700 px-6 py-3 text-xl font-semibold text-white hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-50"
        >
          {running ? "Running…" : "Run scenario"}
        </button>
        {error && !(error instanceof ApiError && error.status === 409) ? (
          <p role="alert" className="text-sm text-red-700 dark:text-red-300">
            {needsToken(error)
              ? "A token is required: enter it above and run again."
              : error instanceof ApiError
                ? error.detail
                : String(error)}
          </p>
        ) : null}
      </div>
    </Panel>
  );
}

/** The workshop: pick a scenario and its pace, run it, watch the timeline, compare with the expected outcome; the live-demo switches and their effect below (a link at the top leads there). */
export function WorkshopView() {
  const tok = useWorkshopToken();
  const list = useQuery(scenariosQuery());
  const shown = useShownScenario();
  const run = useStartRun(tok, shown.watch);
  const scenario = list.data?.scenarios.find((s) => s.name === shown.selectedName) ?? null;
  const shownRun = shown.runId ?? scenario?.runningRunId ?? scenario?.lastRunId ?? null;
  const running = useRunning(run.isPending, scenario, shownRun, shown.started);
  const runPanel = useRef<HTMLDivElement>(null);
  // A run started here scrolls its result into view: at 1280×720 the tiles sit below the scenario's text.
  useEffect(() => {
    if (shown.started) runPanel.current?.scrollIntoView({ block: "start" });
  }, [shown.started]);
  return (
    <div className="space-y-4">
      {tok.shown ? <TokenField token={tok.token} setToken={tok.setToken} /> : null}
      <a
        href="#live-demo"
        data-testid="to-live-demo"
        className="inline-block text-lg text-blue-700 underline-offset-2 hover:underline dark:text-blue-300"
      >
        Live demo: the switches and what they do ↓
      </a>
      <QueryView
        query={list}
        what="Workshop scenarios"
        height={240}
        isEmpty={(d) => d.scenarios.length === 0}
        empty="This server offers no scenario."
      >
        {(d) => (
          <div className="grid gap-4 lg:grid-cols-[20rem_1fr]">
            <Panel
              title="Scenarios"
              description={`${d.scenarios.length} scenarios, each in its own topic and group (${d.mode} mode). ${paceLine(d.scenarios, shown.pace)}.`}
              testId="scenario-list"
            >
              <ScenarioPicker scenarios={d.scenarios} selected={shown.selectedName} onSelect={shown.pick} />
            </Panel>
            <div className="min-w-0 space-y-4">
              {scenario ? (
                <ScenarioDetail
                  scenario={scenario}
                  running={running}
                  onRun={() => run.mutate({ name: scenario.name, pace: shown.pace })}
                  pace={shown.pace}
                  onPace={shown.setPace}
                  error={run.isError ? run.error : null}
                />
              ) : (
                <Panel title="Pick a scenario">
                  <p className="text-lg text-slate-600 dark:text-slate-300">
                    Choose a scenario on the left to read what it shows and what to expect, then run it.
                  </p>
                </Panel>
              )}
              {scenario && shownRun ? (
                <div ref={runPanel} className="scroll-mt-2">
                  <Panel title="Run" description={`Run ${shownRun}`} testId="run-panel">
                    <RunPanel key={shownRun} runId={shownRun} scenario={scenario} />
                  </Panel>
                </div>
              ) : null}
            </div>
          </div>
        )}
      </QueryView>
      <LiveDemo token={tok.token} onNeedToken={tok.show} />
      {list.data?.mode === "real" ? <ReplicaAssignment /> : null}
    </div>
  );
}
