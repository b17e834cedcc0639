/**
 * `npm run bench:ab -- --base <rev> [--only consumer,dedup] [--pairs 2] [--out ab-results.json] [--quick]`:
 * an A/B of two commits in one run. A = `--base` (checked out with `git worktree add --detach` in a
 * temp dir, node_modules hard-linked from this tree), B = this working tree. The two sides run
 * `npm run bench -- --only … --no-render` alternately, A B A B …, so a shared machine's changing load
 * falls on both; each row's two medians and B ÷ A are printed, with each side's spread (min–max), so
 * "within noise" is read from the same run: a B ÷ A whose B range overlaps A's is noise.
 * Needs the stack a bench needs (`npm run stack:up`); stops nothing; removes its worktree at the end.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { arg, flag, intArg } from "../lib/args";
import { runMain } from "../lib/run";
import { median } from "../lib/stats";

const BASE = arg("base", "");
const ONLY = arg("only", "consumer,dedup");
const PAIRS = intArg("pairs", 2, 1, 5);
const OUT = arg("out", "ab-results.json");
const QUICK = flag("quick"); // passed on to `npm run bench`: a smoke test of this driver, figures not comparable

type Row = { name: string; value: unknown; unit?: string };

/** One side's `npm run bench` in `cwd`; its rows by name (numbers only). */
function benchOnce(cwd: string, out: string): Map<string, number> {
  const r = spawnSync(
    "npm",
    ["run", "bench", "--", "--only", ONLY, "--no-render", "--out", out, ...(QUICK ? ["--quick"] : [])],
    { cwd, stdio: ["ignore", "inherit", "inherit"], timeout: 30 * 60_000 },
  );
  if (r.status !== 0) throw new Error(`bench in ${cwd} exited ${r.status ?? r.signal}`);
  const rows = JSON.parse(readFileSync(out, "utf8")) as Row[];
  return new Map(rows.filter((x) => typeof x.value === "number").map((x) => [x.name, x.value as number]));
}

async function main(): Promise<void> {
  if (!BASE) throw new RangeError("bench-ab: --base <rev> is required (the commit to compare this tree with)");
  const rev = execFileSync("git", ["rev-parse", "--short", BASE], { encoding: "utf8" }).trim();
  const dir = mkdtempSync(join(tmpdir(), "bench-ab-"));
  const base = join(dir, "base");
  execFileSync("git", ["worktree", "add", "--detach", base, rev], { stdio: "ignore" });
  try {
    execFileSync("cp", ["-al", "node_modules", join(base, "node_modules")]); // hard links: no copy of the packages
    const sides: Record<"A" | "B", Array<Map<string, number>>> = { A: [], B: [] };
    for (let i = 0; i < PAIRS; i++) {
      for (const side of ["A", "B"] as const) {
        console.log(
          `[bench-ab] ${side}${i + 1} (${side === "A" ? rev : "this tree"}) load ${loadavg()[0]!.toFixed(2)}`,
        );
        sides[side].push(benchOnce(side === "A" ? base : process.cwd(), join(dir, `${side}${i}.json`)));
      }
    }
    const names = [...sides.B[0]!.keys()].filter((n) => sides.A.every((m) => m.has(n)) && !n.startsWith("machine."));
    const result = names.map((name) => {
      const a = sides.A.map((m) => m.get(name)!);
      const b = sides.B.map((m) => m.get(name)!);
      const ma = median(a);
      const mb = median(b);
      // With one pair there is no range to compare: every row would read "apart".
      const overlap = PAIRS < 2 || (Math.max(...a) >= Math.min(...b) && Math.max(...b) >= Math.min(...a));
      return { name, a, b, ratio: ma === 0 ? null : +(mb / ma).toFixed(3), overlap };
    });
    for (const r of result)
      console.log(
        `${r.name.padEnd(58)} A ${r.a.join(" / ").padEnd(24)} B ${r.b.join(" / ").padEnd(24)} B÷A ${r.ratio ?? "n/a"}${r.overlap ? "" : "  (ranges apart)"}`,
      );
    writeFileSync(OUT, `${JSON.stringify({ base: rev, only: ONLY, pairs: PAIRS, rows: result }, null, 2)}\n`);
  } finally {
    execFileSync("git", ["worktree", "remove", "--force", base], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main, "bench-ab");
