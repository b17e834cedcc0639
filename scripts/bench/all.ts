/**
 * `npm run bench` — every benchmark of the project in one command, each against a reference
 * measured in the same run; writes bench-results.json (git-ignored) and renders docs/BENCHMARKS.md.
 *
 *   npm run bench -- [--only dedup,inspect,consumer,breakdown,memory,ui] [--quick] [--no-render]
 *                    [--out bench-results.json] [--doc docs/BENCHMARKS.md]
 *
 * Steps (each a child process bounded in time, its figures read from its `--json` file):
 *   dedup    `npm run bench:dedup -- --json …`      claims/s vs redis-benchmark, middleware overhead
 *   inspect  `npm run bench:inspect -- --json …`    inspector scan/estimate, /api/overview p95
 *   consumer `npm run bench:consumer -- --json … --variants raw,sub,mem,ours,rel,floor,naive --profile …`
 *   ci       no run: `ci.wall_s` and its phases from test-results/ci-timing.json, written by `bash .ci/run`
 *   breakdown `npm run bench:consumer -- --breakdown --json …`  CPU per message of each layer, Redis CPU per key
 *   memory   `npm run bench:memory -- --json …`     used_memory per key vs the projection
 *   fleet    `npm run bench:fleet -- --json …`      /api/overview p95 at 200 handlers × 50 viewers, Prometheus queries 10 vs 200 handlers
 *   ui       `next build` of the committed tree (git archive HEAD → a temp dir, node_modules
 *            hard-linked; the shared .next is not touched) and the gzip size of the First Load JS
 *            chunks that the build lists for route `/` (.next/diagnostics/route-bundle-stats.json);
 *            then that build's time to data painted (scripts/bench/ui.ts: `next start` on the live
 *            stack, median of 5 cold loads of `/` and a handler page in headless Chromium)
 * `--quick` shrinks every step (smoke test of the driver, figures not comparable).
 * bench-results.json: [{ name, value, unit, reference, ratio, target?, goal?, step, command, detail? }],
 * plus `machine.*` rows (nproc, CPU, memory, load, commit).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { FIGURES, renderBenchmarks, verdict, type BenchResult } from "./render";
import { arg, flag } from "../lib/args";

const STEPS = ["dedup", "inspect", "consumer", "breakdown", "memory", "fleet", "ui"] as const;
type Step = (typeof STEPS)[number];
const QUICK = flag("quick");
const ONLY = arg("only", STEPS.join(",")).split(",") as Step[];
for (const s of ONLY)
  if (!STEPS.includes(s)) throw new RangeError(`bench: --only must list ${STEPS.join(", ")} (got ${s})`);
const OUT = arg("out", "bench-results.json");
const DOC = arg("doc", "docs/BENCHMARKS.md");
const ROOT = process.cwd();
const STEP_TIMEOUT_MS = 10 * 60_000;
const tmp = mkdtempSync(join(tmpdir(), "bench-"));

/** The command line of a step, as a user would type it, and its extra args for the run. */
const SCRIPT_ARGS: Record<Exclude<Step, "ui">, { script: string; args: string[]; quick: string[] }> = {
  dedup: { script: "bench:dedup", args: [], quick: ["--n", "5000"] },
  inspect: { script: "bench:inspect", args: [], quick: ["--keys", "50000", "--load-ms", "1500"] },
  consumer: {
    script: "bench:consumer",
    args: ["--variants", "raw,sub,mem,ours,rel,floor,naive", "--rounds", "3", "--profile", tmp],
    quick: ["--messages", "20000", "--rounds", "1"],
  },
  breakdown: { script: "bench:consumer", args: ["--breakdown"], quick: [] },
  memory: { script: "bench:memory", args: [], quick: ["--keys", "20000"] },
  fleet: { script: "bench:fleet", args: [], quick: ["--load-ms", "1500"] },
};

/** Runs a command, echoing its output, killed (its process group) after `timeoutMs`. */
function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; timeoutMs: number; env?: Record<string, string> },
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    const onData = (b: Buffer, to: NodeJS.WriteStream) => {
      out += b.toString();
      to.write(b);
    };
    child.stdout.on("data", (b: Buffer) => onData(b, process.stdout));
    child.stderr.on("data", (b: Buffer) => onData(b, process.stderr));
    const timer = setTimeout(() => {
      console.error(`[bench] ${cmd} ${args.join(" ")} exceeded ${opts.timeoutMs / 1000} s: stopping it`);
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    }, opts.timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Rows of a step's JSON: an array of rows, or (bench:inspect) an object `{ name: value, details }`. */
function rowsOf(step: Step, json: unknown): BenchResult[] {
  if (Array.isArray(json)) return json as BenchResult[];
  if (json && typeof json === "object") {
    const o = json as Record<string, unknown> & { details?: Record<string, Record<string, unknown>> };
    const d = o.details ?? {};
    const refs: Record<string, { reference: number | null; unit: string }> = {
      "inspect.scan_keys_per_sec": { reference: (d.plainScan?.keysPerSec as number) ?? null, unit: "keys/s" },
      "inspect.scan_vs_plain_scan": { reference: null, unit: "ratio" },
      "inspect.scan_vs_plain_scan_every_key_has_ttl": { reference: null, unit: "ratio" },
      "inspect.estimate_ms_1m_keys": { reference: (d.exactCount?.ms as number) ?? null, unit: "ms" },
      "api.overview_p95_ms_50_viewers": {
        reference: ((d.overview?.oneViewer as Record<string, number> | undefined)?.p95 as number) ?? null,
        unit: "ms",
      },
    };
    return Object.entries(o)
      .filter(([k, v]) => k !== "details" && typeof v === "number")
      .map(([name, v]) => {
        const ref = refs[name]?.reference ?? null;
        const value = v as number;
        return {
          name,
          value,
          unit: refs[name]?.unit ?? "",
          reference: ref,
          ratio: ref ? +(value / ref).toFixed(4) : null,
          detail: name.startsWith("inspect.") ? (name.includes("scan") ? d.exactCount : d.estimate) : d.overview,
        };
      });
  }
  throw new Error(`${step}: unreadable JSON`);
}

/** The last line of `out` that parses as JSON (fallback when a step wrote no --json file). */
function lastJsonLine(out: string): unknown {
  const lines = out.trim().split("\n").reverse();
  for (const l of lines) {
    const t = l.trim();
    if (!(t.startsWith("[") || t.startsWith("{"))) continue;
    try {
      return JSON.parse(t);
    } catch {
      // not JSON
    }
  }
  return undefined;
}

async function scriptStep(step: Exclude<Step, "ui">): Promise<BenchResult[]> {
  const s = SCRIPT_ARGS[step];
  const json = join(tmp, `${step}.json`);
  const extra = [...s.args, ...(QUICK ? s.quick : [])];
  const command = `npm run ${s.script}${
    s.args.length || QUICK
      ? ` -- ${extra
          .filter((a) => a !== tmp)
          .join(" ")
          .replace("--profile", "--profile <dir>")}`
      : ""
  }`;
  console.log(`\n[bench] ===== ${step}: ${command}`);
  const t0 = Date.now();
  const r = await run("npm", ["run", "-s", s.script, "--", ...extra, "--json", json], { timeoutMs: STEP_TIMEOUT_MS });
  const parsed = existsSync(json) ? (JSON.parse(readFileSync(json, "utf8")) as unknown) : lastJsonLine(r.out);
  if (parsed === undefined) throw new Error(`${step} exited with ${r.code} and printed no figures`);
  if (r.code !== 0) console.error(`[bench] ${step} exited with ${r.code}; keeping the figures it wrote`);
  console.log(`[bench] ${step} took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return rowsOf(step, parsed).map((x) => ({ ...x, step, command }));
}

/** gzip -9 size in bytes of the listed chunks (paths relative to the project). */
function gzSize(dir: string, paths: readonly string[]): { gz: number; raw: number } {
  let gz = 0;
  let raw = 0;
  for (const p of paths) {
    const b = readFileSync(join(dir, p));
    raw += b.length;
    gz += gzipSync(b, { level: 9 }).length;
  }
  return { gz, raw };
}

async function uiStep(): Promise<BenchResult[]> {
  const command = "npm run bench -- --only ui";
  console.log(`\n[bench] ===== ui: next build of HEAD in a temp copy, First Load JS of / (gzip)`);
  const dir = join(tmp, "app");
  execFileSync("mkdir", ["-p", dir]);
  // The committed tree (others' half-written files stay out), without touching the shared .next.
  execFileSync("bash", ["-c", `git archive HEAD | tar -x -C ${JSON.stringify(dir)}`], { cwd: ROOT });
  // Hard links: a copy in seconds without disk (a symlink would point outside the project root,
  // which Turbopack refuses).
  execFileSync("cp", ["-al", join(ROOT, "node_modules"), join(dir, "node_modules")]);
  // Type errors are the tests' business (and a half-committed test file must not hide the bundle
  // size): the copy's config skips `next build`'s type check; the bundle is the same.
  execFileSync("mv", [join(dir, "next.config.js"), join(dir, "next.config.orig.js")]);
  writeFileSync(
    join(dir, "next.config.js"),
    'const c = require("./next.config.orig.js");\nmodule.exports = { ...c, typescript: { ...(c.typescript ?? {}), ignoreBuildErrors: true } };\n',
  );
  const t0 = Date.now();
  const r = await run("npx", ["next", "build"], {
    cwd: dir,
    timeoutMs: STEP_TIMEOUT_MS,
    env: { NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.code !== 0) throw new Error(`next build failed (exit ${r.code})`);
  const stats = JSON.parse(readFileSync(join(dir, ".next/diagnostics/route-bundle-stats.json"), "utf8")) as Array<{
    route: string;
    firstLoadChunkPaths: string[];
    firstLoadUncompressedJsBytes: number;
  }>;
  const route = (name: string) => {
    const s = stats.find((x) => x.route === name);
    if (!s)
      throw new Error(`route ${name} not in route-bundle-stats.json (routes: ${stats.map((x) => x.route).join(", ")})`);
    return gzSize(dir, s.firstLoadChunkPaths);
  };
  const home = route("/");
  const base = route("/_not-found");
  const perRoute = Object.fromEntries(
    stats.map((s) => [s.route, +(gzSize(dir, s.firstLoadChunkPaths).gz / 1024).toFixed(1)]),
  );
  console.log(
    `[bench] next build took ${((Date.now() - t0) / 1000).toFixed(0)} s; First Load JS gzip KB per route: ${JSON.stringify(perRoute)}`,
  );
  // Time to data painted, from this very build (issue 15).
  const paintJson = join(tmp, "ui-paint.json");
  const paint = await run(
    "npx",
    ["tsx", join(ROOT, "scripts/bench/ui.ts"), "--dir", dir, "--loads", QUICK ? "1" : "5", "--json", paintJson],
    { timeoutMs: STEP_TIMEOUT_MS },
  );
  const painted = existsSync(paintJson)
    ? (JSON.parse(readFileSync(paintJson, "utf8")) as Record<string, unknown>)
    : null;
  if (!painted) console.error(`[bench] bench-ui exited with ${paint.code} and wrote no figures`);
  const paintRows: BenchResult[] = painted
    ? (["overview", "handler"] as const).map((p) => {
        const d = painted[`${p}Detail`] as { firstNumberMedianMs: number } & Record<string, unknown>;
        const v = painted[`ui.${p}_data_painted_ms`] as number;
        return {
          name: `ui.${p}_data_painted_ms`,
          value: v,
          unit: "ms",
          reference: d.firstNumberMedianMs,
          ratio: +(v / d.firstNumberMedianMs).toFixed(4),
          step: "ui",
          command,
          detail: d,
        };
      })
    : [];
  return [
    ...paintRows,
    {
      name: "ui.overview_first_load_js_kb_gz",
      value: +(home.gz / 1024).toFixed(1),
      unit: "KB",
      reference: +(base.gz / 1024).toFixed(1),
      ratio: +(home.gz / base.gz).toFixed(4),
      step: "ui",
      command,
      detail: {
        uncompressedKB: +(home.raw / 1024).toFixed(1),
        perRouteKBgz: perRoute,
        source: ".next/diagnostics/route-bundle-stats.json firstLoadChunkPaths, gzip -9 each chunk",
      },
    },
  ];
}

function machineRows(startedAt: string, loadStart: number[]): BenchResult[] {
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

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  console.log(
    `[bench] ${startedAt}  steps ${ONLY.join(", ")}${QUICK ? "  (--quick: smoke sizes)" : ""}  ${cpus().length} × ${cpus()[0]?.model}  load ${loadStart.map((x) => x.toFixed(2)).join(" ")}`,
  );
  const results: BenchResult[] = [];
  const failures: string[] = [];
  try {
    for (const step of STEPS) {
      if (!ONLY.includes(step)) continue;
      try {
        results.push(...(step === "ui" ? await uiStep() : await scriptStep(step)));
      } catch (e) {
        failures.push(`${step}: ${e instanceof Error ? e.message : String(e)}`);
        console.error(`[bench] step ${step} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
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
  all.push(...machine);
  writeFileSync(OUT, `${JSON.stringify(all, null, 2)}\n`);
  console.log(`\n[bench] wrote ${OUT} (${all.length} rows)`);
  for (const name of Object.keys(FIGURES)) {
    const r = all.find((x) => x.name === name);
    console.log(
      `  ${name.padEnd(44)} ${String(r?.value ?? "not measured").padStart(12)} ${r?.unit ?? ""}  ref ${r?.reference ?? "—"}  ${r ? verdict(r).replace(/\*/g, "") : "NOT MEASURED"}`,
    );
  }
  if (!flag("no-render")) {
    writeFileSync(DOC, renderBenchmarks(all));
    console.log(`[bench] rendered ${DOC}`);
  }
  if (failures.length) {
    console.error(`[bench] failed steps:\n  ${failures.join("\n  ")}`);
    process.exitCode = 1;
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
