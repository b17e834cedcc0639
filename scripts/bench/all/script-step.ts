/** A step that is an npm script (every step but ui): its command line, its run and its rows. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchResult } from "../render";
import { run } from "./run";
import { QUICK, STEP_TIMEOUT_MS, tmp, type Step } from "./settings";

/** The command line of a step, as a user would type it, and its extra args for the run. */
const SCRIPT_ARGS: Record<
  Exclude<Step, "ui">,
  {
    script: string;
    args: string[];
    quick: string[];
    /** The rows the step owns, when its script reports more (a reference another step measures too). @default all */
    keep?: (name: string) => boolean;
  }
> = {
  dedup: { script: "bench:dedup", args: ["--no-inbox"], quick: ["--n", "5000"] },
  inbox: { script: "bench:dedup", args: ["--inbox-only"], quick: ["--inbox-messages", "200"] },
  inspect: { script: "bench:inspect", args: [], quick: ["--keys", "50000", "--load-ms", "1500"] },
  consumer: {
    script: "bench:consumer",
    args: ["--variants", "raw,sub,mem,ours,rel,floor,naive", "--rounds", "3", "--profile", tmp],
    quick: ["--messages", "20000", "--rounds", "1"],
  },
  transactions: {
    script: "bench:consumer",
    // A relay runs at ≈ 1 % of raw kafkajs (one awaited publish per output): 30,000 messages a round.
    args: ["--variants", "floor,relay,relaytx,relaydedup", "--messages", "30000", "--rounds", "3"],
    quick: ["--messages", "3000", "--rounds", "1"],
    // Its floor's own msgs/s is the consumer step's figure; this step reports the relays and the ratios.
    keep: (name) => name.startsWith("consumer.kafka_tx") || name.startsWith("consumer.msgs_per_sec.relay"),
  },
  breakdown: { script: "bench:consumer", args: ["--breakdown"], quick: [] },
  memory: { script: "bench:memory", args: [], quick: ["--keys", "20000"] },
  fleet: { script: "bench:fleet", args: [], quick: ["--load-ms", "1500"] },
};

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

/** Runs the step's npm script with `--json` and returns its rows, each with the step and its command. */
export async function scriptStep(step: Exclude<Step, "ui">): Promise<BenchResult[]> {
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
  return rowsOf(step, parsed)
    .filter((x) => s.keep?.(x.name) ?? true)
    .map((x) => ({ ...x, step, command }));
}
