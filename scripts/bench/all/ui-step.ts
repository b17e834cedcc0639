/**
 * The ui step: `next build` of the committed tree in a temp copy, the gzip size of the First Load JS
 * of `/` against `/_not-found`, then that build's time to data painted (scripts/bench/ui.ts).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { BenchResult } from "../render";
import { run } from "./run";
import { QUICK, ROOT, STEP_TIMEOUT_MS, tmp } from "./settings";

const command = "npm run bench -- --only ui";

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

/** Builds the committed tree (HEAD) in `dir`, without touching the shared .next; when `next build` started. */
async function buildHead(dir: string): Promise<number> {
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
  return t0;
}

/** The First Load JS row: `/` against `/_not-found` (gzip), every route's size in its detail. */
function firstLoadRow(dir: string, t0: number): BenchResult {
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
  return {
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
  };
}

/** Time to data painted, from this very build (issue 15): one row per page, none when bench-ui failed. */
async function paintRows(dir: string): Promise<BenchResult[]> {
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
  return painted
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
}

/** The ui step's rows: time to data painted (overview, handler), then the First Load JS size. */
export async function uiStep(): Promise<BenchResult[]> {
  console.log(`\n[bench] ===== ui: next build of HEAD in a temp copy, First Load JS of / (gzip)`);
  const dir = join(tmp, "app");
  const t0 = await buildHead(dir);
  const firstLoad = firstLoadRow(dir, t0);
  return [...(await paintRows(dir)), firstLoad];
}
