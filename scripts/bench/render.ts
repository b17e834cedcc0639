/**
 * Renders docs/BENCHMARKS.md from bench-results.json (written by `npm run bench`).
 *
 *   npx tsx scripts/bench/render.ts [--in bench-results.json] [--out docs/BENCHMARKS.md]
 *
 * Every figure comes from the results file; the words around them (how to read them, what limits
 * the missed ones) are in render/prose.ts, the required figures and their targets in
 * render/figures.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { arg } from "../lib/args";
import { consumerSection } from "./render/consumer";
import { guaranteesSection } from "./render/guarantees";
import { FIGURES, type BenchResult } from "./render/figures";
import { detailOf, get, goalText, nprocOf, num, verdict } from "./render/format";
import { fill, PROSE } from "./render/prose";
import { ciSection, memorySection, otherMisses, pagesAndFleetSection } from "./render/sections";

export { FIGURES, verdict, type BenchResult };

interface Machine {
  cpuModel?: string;
  memGiB?: number;
  node?: string;
  commit?: string;
  dirty?: boolean;
  startedAt?: string;
  finishedAt?: string;
  loadStart?: number[];
  loadEnd?: number[];
  reruns?: Array<{ steps: string[]; at: string; load: number[] }>;
}

/** "## Machine and run": cores, CPU, memory, Node, the run's time and commit, the load, partial re-runs. */
function machineSection(results: readonly BenchResult[]): string[] {
  const m = detailOf<Machine>(get(results, "machine.nproc"));
  const loads = (xs: number[] | undefined) => xs?.map((x) => x.toFixed(2)).join(" / ") ?? "?";
  const L: string[] = ["## Machine and run", ""];
  L.push(
    fill(PROSE.machineCpu, {
      nproc: nprocOf(results),
      cpuModel: m.cpuModel ?? "?",
      memGiB: m.memGiB ?? "?",
      node: m.node ?? "?",
    }),
  );
  L.push(
    fill(PROSE.machineRun, {
      startedAt: m.startedAt ?? "?",
      finishedAt: m.finishedAt ?? "?",
      commit: m.commit ?? "?",
      dirty: m.dirty ? PROSE.machineDirty : "",
    }),
  );
  const quiet = m.loadStart?.[0] !== undefined && m.loadStart[0] < 1;
  L.push(
    fill(quiet ? PROSE.machineLoadQuiet : PROSE.machineLoad, { start: loads(m.loadStart), end: loads(m.loadEnd) }),
  );
  for (const r of m.reruns ?? [])
    L.push(
      fill(PROSE.machineRerun, {
        steps: r.steps.join(", "),
        at: r.at,
        load: r.load.join(" / "),
        only: r.steps.join(","),
      }),
    );
  L.push("");
  return L;
}

/** "## Figures against targets": every required figure, measured or not; then the run's other rows. */
function figuresSection(results: readonly BenchResult[]): string[] {
  const L: string[] = [
    "## Figures against targets",
    "",
    "| Figure | Value | Reference (same run) | Ratio | Target | Verdict | Reproduce |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const [name, f] of Object.entries(FIGURES)) {
    const r = get(results, name);
    const unit = r?.unit ?? "";
    L.push(
      `| \`${name}\`<br>${f.what} | ${r ? num(r.value, unit) : "**not measured**"} | ${r ? num(r.reference) : "—"}<br><sub>${f.referenceIs}</sub> | ${r ? num(r.ratio) : "—"} | ${goalText(f.target, f.goal, unit)} (${f.source}) | ${r ? verdict({ ...r, target: f.target, goal: f.goal }) : "**not measured**"} | \`${r?.command ?? "npm run bench"}\` |`,
    );
  }
  L.push("");
  const others = results.filter((r) => !(r.name in FIGURES) && !r.name.startsWith("machine."));
  if (others.length) {
    L.push("### Supporting figures", "", "| Figure | Value | Reference | Ratio | Reproduce |", "|---|---|---|---|---|");
    for (const r of others)
      L.push(
        `| \`${r.name}\` | ${num(r.value, r.unit)} | ${num(r.reference)} | ${num(r.ratio)} | \`${r.command ?? ""}\` |`,
      );
    L.push("");
  }
  return L;
}

/** The Markdown of docs/BENCHMARKS.md. */
export function renderBenchmarks(results: BenchResult[]): string {
  const L = [PROSE.header, "", ...machineSection(results), ...figuresSection(results)];
  L.push(
    ...pagesAndFleetSection(results),
    ...consumerSection(results),
    ...guaranteesSection(results),
    ...memorySection(results),
    ...ciSection(results),
    ...otherMisses(results),
  );
  return `${L.join("\n")}\n`;
}

function main(): void {
  const input = arg("in", "bench-results.json");
  const out = arg("out", "docs/BENCHMARKS.md");
  const results = JSON.parse(readFileSync(input, "utf8")) as BenchResult[];
  writeFileSync(out, renderBenchmarks(results));
  console.log(`rendered ${out} from ${input} (${results.length} figures)`);
}

if (process.argv[1]?.endsWith("/bench/render.ts")) main();
