"use client";

/**
 * The workshop page's state: which scenario and run are on screen (the URL, and what this page
 * picked or started before the URL caught up), starting a run, and whether the Run button is busy.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { RunPace, ScenarioInfo } from "@/lib/api/workshop";
import { runQuery, scenariosQuery, startRun, ApiError } from "@/lib/query-options";
import { useViewState } from "@/lib/url-state";
import { needsToken, type useWorkshopToken } from "./token";

/**
 * The scenario and the run on screen. A pick and a run just started show at once; the URL
 * (`scenario=`, `run=`), written too, follows in a transition — until then the run panel would keep
 * showing the previous run ("Done") under a button that says "Run scenario".
 */
export function useShownScenario() {
  const { params, set } = useViewState();
  const [picked, setPicked] = useState<string | null>(null);
  const [started, setStarted] = useState<string | null>(null);
  return {
    selectedName: picked ?? params.get("scenario"),
    /** The pace a run starts at (`pace=` in the URL, so a presenter can keep it in a bookmark). */
    pace: (params.get("pace") === "narrated" ? "narrated" : "fast") as RunPace,
    setPace: (pace: RunPace) => set({ pace: pace === "fast" ? null : pace }),
    runId: started ?? params.get("run"),
    /** The run started on this page, if any. */
    started,
    pick: (name: string) => {
      setPicked(name);
      setStarted(null);
      set({ scenario: name, run: null });
    },
    watch: (runId: string) => {
      setStarted(runId);
      set({ run: runId });
    },
  };
}

/** Starts a scenario's run and watches it; a refused token shows the token field, a 409 (this scenario is running already) watches that run. */
export function useStartRun(tok: ReturnType<typeof useWorkshopToken>, watch: (runId: string) => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ name, pace }: { name: string; pace: RunPace }) => startRun(name, tok.token, pace),
    onSuccess: (r) => {
      watch(r.runId);
      void qc.invalidateQueries({ queryKey: scenariosQuery().queryKey });
    },
    onError: (e) => {
      if (needsToken(e)) tok.show();
      if (e instanceof ApiError && e.status === 409 && typeof e.body.runId === "string") watch(e.body.runId);
    },
  });
}

/**
 * Whether the Run button says "Running…": while the start request is out, or while the shown run
 * is — by the run's own answer (the run panel's query and cache entry, polled while running), not
 * the scenario list's: that list, fetched just before the run ended, could say "running" after it
 * and kept the button "Running…" for good.
 */
export function useRunning(
  starting: boolean,
  scenario: ScenarioInfo | null,
  shownRun: string | null,
  started: string | null,
): boolean {
  const shownStatus = useQuery(runQuery(shownRun)).data?.status;
  return runButtonBusy({
    starting,
    shownRun,
    shownStatus,
    startedHere: started,
    listRunning: scenario?.runningRunId ?? null,
  });
}

/**
 * The Run button's state from what the page knows. A run whose own answer has not come yet is
 * running when this page started it or the list says so: the button said an enabled "Run
 * scenario" beside "Starting the run…" and the list's "running" for 5 s, and a presenter clicks twice.
 */
export function runButtonBusy(k: {
  starting: boolean;
  shownRun: string | null;
  shownStatus: string | undefined;
  startedHere: string | null;
  listRunning: string | null;
}): boolean {
  if (k.starting) return true;
  if (k.shownRun !== null) {
    if (k.shownStatus === "running") return true;
    if (k.shownStatus === undefined && (k.startedHere === k.shownRun || k.listRunning === k.shownRun)) return true;
  }
  return k.listRunning !== null && k.listRunning !== k.shownRun;
}
