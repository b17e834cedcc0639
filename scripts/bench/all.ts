/**
 * `npm run bench` — every benchmark of the project in one command, each against a reference
 * measured in the same run; writes bench-results.json (git-ignored) and renders docs/BENCHMARKS.md.
 *
 *   npm run bench -- [--only dedup,inbox,inspect,consumer,transactions,breakdown,memory,fleet,ui] [--quick] [--no-render]
 *                    [--out bench-results.json] [--doc docs/BENCHMARKS.md]
 *
 * Steps (each a child process bounded in time, its figures read from its `--json` file):
 *   dedup    `npm run bench:dedup -- --no-inbox --json …`  claims/s vs redis-benchmark, middleware overhead
 *   inbox    `npm run bench:dedup -- --inbox-only --json …`  the PostgreSQL inbox: µs per message added to a
 *            plain transaction with the same INSERT, and msgs/s against that floor (`dedup.inbox_vs_floor`)
 *   inspect  `npm run bench:inspect -- --json …`    inspector scan/estimate, /api/overview p95
 *   consumer `npm run bench:consumer -- --json … --variants raw,sub,mem,ours,rel,floor,naive --profile …`
 *   transactions `npm run bench:consumer -- --variants floor,relay,relaytx,relaydedup --messages 30000 --rounds 3 --json …`
 *            a Kafka-to-Kafka handler in the Kafka-transactions mode: msgs/s against the floor and the
 *            plain relay (`consumer.kafka_tx_vs_floor`, `…_vs_plain_relay`), CPU µs per message it adds
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
import { rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { flag } from "../lib/args";
import { FIGURES, renderBenchmarks, verdict, type BenchResult } from "./render";
import { addCiRow, machineWithReruns, withPrevious } from "./all/rows";
import { scriptStep } from "./all/script-step";
import { DOC, ONLY, OUT, QUICK, STEPS, tmp } from "./all/settings";
import { uiStep } from "./all/ui-step";

/** Every step of --only in order; a failing step is listed and the others still run. */
async function runSteps(): Promise<{ results: BenchResult[]; failures: string[] }> {
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
  return { results, failures };
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadStart = loadavg();
  console.log(
    `[bench] ${startedAt}  steps ${ONLY.join(", ")}${QUICK ? "  (--quick: smoke sizes)" : ""}  ${cpus().length} × ${cpus()[0]?.model}  load ${loadStart.map((x) => x.toFixed(2)).join(" ")}`,
  );
  const { results, failures } = await runSteps();
  const { all, previousMachine } = withPrevious(results);
  addCiRow(all);
  all.push(...machineWithReruns(startedAt, loadStart, previousMachine));
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
