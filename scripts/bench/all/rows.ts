/** The rows a run adds beside its steps': the machine, CI's last wall time, and a partial run's merge. */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { FIGURES, type BenchResult } from "../render";
import { DOC, ONLY, OUT, QUICK, ROOT, STEPS, type Step } from "./settings";

/** The machine the run measured on (nproc, CPU, memory, load at start and end, commit and whether dirty). */
export function machineRows(startedAt: string, loadStart: number[]): BenchResult[] {
  let commit = "?";
  let dirty = false;
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    // The rendered doc itself does not count: a partial re-run (--only) always follows a run that rewrote it.
    dirty =
      execFileSync("git", ["status", "--porcelain", "--untracked-files=no", "--", ".", `:(exclude)${DOC}`], {
        encoding: "utf8",
      }).trim() !== "";
  } catch {
    // not a git checkout
  }
  const loadEnd = loadavg();
  return [
    {
      name: "machine.nproc",
      value: cpus().length,
      unit: "cores",
      reference: null,
      ratio: null,
      detail: {
        cpuModel: cpus()[0]?.model ?? "?",
        memGiB: +(totalmem() / 2 ** 30).toFixed(1),
        node: process.version,
        commit,
        dirty,
        startedAt,
        finishedAt: new Date().toISOString(),
        loadStart: loadStart.map((x) => +x.toFixed(2)),
        loadEnd: loadEnd.map((x) => +x.toFixed(2)),
        quick: QUICK,
      },
    },
    {
      name: "machine.loadavg_1m",
      value: +((loadStart[0]! + loadEnd[0]!) / 2).toFixed(2),
      unit: "load",
      reference: null,
      ratio: null,
    },
  ];
}

/**
 * A partial run (--only) keeps the other steps' figures from the previous results file; every row
 * gets its figure's target and goal. Also the previous run's machine detail, when there was one.
 */
export function withPrevious(results: BenchResult[]): {
  all: BenchResult[];
  previousMachine: Record<string, unknown> | null;
} {
  // A partial run (--only) keeps the other steps' figures from the previous results file.
  let previous: BenchResult[] = [];
  let previousMachine: Record<string, unknown> | null = null;
  if (ONLY.length < STEPS.length && existsSync(OUT)) {
    const prev = JSON.parse(readFileSync(OUT, "utf8")) as BenchResult[];
    previous = prev.filter((r) => !r.name.startsWith("machine.") && !ONLY.includes(r.step as Step));
    previousMachine =
      (prev.find((r) => r.name === "machine.nproc")?.detail as Record<string, unknown> | undefined) ?? null;
  }
  const all = [...previous, ...results].map((r) => {
    const f = FIGURES[r.name];
    return f ? { ...r, target: f.target, goal: f.goal, referenceIs: f.referenceIs } : r;
  });
  return { all, previousMachine };
}

/** Replaces the `ci.wall_s` row with `.ci/run`'s last record, when there is one. */
export function addCiRow(all: BenchResult[]): void {
  // CI's wall time is measured by `.ci/run` itself (a fresh clone), never here: read its last record.
  const ciFile = join(ROOT, "test-results", "ci-timing.json");
  if (existsSync(ciFile)) {
    const ci = JSON.parse(readFileSync(ciFile, "utf8")) as {
      wallS: number;
      serialSumS?: number;
      phases?: unknown;
      commit?: string;
      finishedAt?: string;
      mode?: string;
    };
    for (let i = all.length - 1; i >= 0; i--) if (all[i]!.name === "ci.wall_s") all.splice(i, 1);
    const f = FIGURES["ci.wall_s"];
    all.push({
      name: "ci.wall_s",
      value: ci.wallS,
      unit: "s",
      reference: ci.serialSumS ?? null,
      ratio: ci.serialSumS ? +(ci.wallS / ci.serialSumS).toFixed(4) : null,
      target: f?.target,
      goal: f?.goal,
      step: "ci",
      command: "bash .ci/run",
      detail: ci,
    } as BenchResult);
  }
}

/** The machine rows; after a partial re-run, the full run's start and load, and the re-runs listed. */
export function machineWithReruns(
  startedAt: string,
  loadStart: number[],
  previousMachine: Record<string, unknown> | null,
): BenchResult[] {
  const machine = machineRows(startedAt, loadStart);
  if (previousMachine) {
    // A partial re-run: the run's start stays the full run's; the re-run steps are listed.
    const m = machine[0]!.detail as Record<string, unknown>;
    const reruns = [
      ...((previousMachine.reruns as unknown[] | undefined) ?? []),
      { steps: ONLY, at: startedAt, load: loadStart.map((x) => +x.toFixed(2)) },
    ];
    machine[0]!.detail = {
      ...m,
      startedAt: previousMachine.startedAt ?? m.startedAt,
      loadStart: previousMachine.loadStart ?? m.loadStart,
      reruns,
    };
  }
  return machine;
}
