/** `npm run bench`'s arguments, its steps and the temp dir its steps write to. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { arg, flag } from "../../lib/args";

export const STEPS = [
  "dedup",
  "inbox",
  "inspect",
  "consumer",
  "transactions",
  "breakdown",
  "memory",
  "fleet",
  "ui",
] as const;
export type Step = (typeof STEPS)[number];
export const QUICK = flag("quick");
export const ONLY = arg("only", STEPS.join(",")).split(",") as Step[];
for (const s of ONLY)
  if (!STEPS.includes(s)) throw new RangeError(`bench: --only must list ${STEPS.join(", ")} (got ${s})`);
export const OUT = arg("out", "bench-results.json");
export const DOC = arg("doc", "docs/BENCHMARKS.md");
export const ROOT = process.cwd();
export const STEP_TIMEOUT_MS = 10 * 60_000;
/** Where the steps write their --json files (removed at the end of the run). */
export const tmp = mkdtempSync(join(tmpdir(), "bench-"));
