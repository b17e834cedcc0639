/**
 * The project's generated rule file with the deadman rules' waiting times divided by one factor, so
 * that a test can watch them fire on a real Prometheus in seconds instead of minutes: the thresholds
 * in seconds (`> 300`), the `for:` durations and the deadman subquery's step (`[1d:60s]` and the
 * `time() - 60` the age counts from: the resolution of "last seen"; undivided, a 15 s threshold would
 * wait a 1 min step).
 * Every other character of the file is kept, every other rule untouched. Factor 1 returns the file
 * as generated.
 */
import { DEADMAN_STEP, DEADMAN_STEP_SECONDS } from "@/lib/alert-exprs";
import { DEADMAN_ALERTS } from "@/lib/deadman-alerts";

/** One token the transform replaced: the 0-based line, which rule, which constant, old and new text. */
export interface RuleEdit {
  line: number;
  alert: string;
  what: "threshold" | "for" | "step";
  from: string;
  to: string;
}

/** The transformed rule file and the list of what it changed. */
export interface ScaledRules {
  text: string;
  edits: RuleEdit[];
}

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** A Prometheus duration of one unit (`2m`, `15s`, `500ms`) in seconds. */
export function durationSeconds(d: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(d);
  if (!m) throw new RangeError(`duration: expected <n>ms|s|m|h|d, got ${d}`);
  return Number(m[1]) * UNIT_SECONDS[m[2]!]!;
}

/** `d` divided by `factor`, in whole seconds when it divides, else whole milliseconds; `d` itself when unchanged. */
function scaleDuration(d: string, factor: number): string {
  const s = durationSeconds(d) / factor;
  if (s === durationSeconds(d)) return d;
  if (Number.isInteger(s)) return `${s}s`;
  const ms = s * 1000;
  if (!Number.isInteger(ms)) throw new RangeError(`factor ${factor}: ${d} / ${factor} is not a whole number of ms`);
  return `${ms}ms`;
}

/**
 * `rules` (the text of infra/prometheus/rules/dedup.yml) with the time constants of the rules of
 * `DEADMAN_ALERTS` divided by `factor` (≥ 1). Throws when a deadman rule is missing or its `expr`
 * no longer has the shape generated from `lib/deadman-alerts.ts` (so a test cannot go on with an
 * unscaled rule).
 */
export function scaleDeadmanRules(rules: string, factor: number): ScaledRules {
  if (!(Number.isFinite(factor) && factor >= 1)) throw new RangeError(`factor: expected ≥ 1, got ${factor}`);
  type Deadman = (typeof DEADMAN_ALERTS)[keyof typeof DEADMAN_ALERTS];
  const deadman = new Map<string, Deadman>(Object.values(DEADMAN_ALERTS).map((a) => [a.name, a]));
  const edits: RuleEdit[] = [];
  const seen = new Set<string>();
  let alert: Deadman | undefined;
  const lines = rules.split("\n").map((line, i) => {
    const name = /^\s*- alert: (\S+)\s*$/.exec(line)?.[1];
    if (name !== undefined) {
      alert = deadman.get(name);
      if (alert) seen.add(name);
      return line;
    }
    if (!alert) return line;
    const edit = (what: RuleEdit["what"], from: string, to: string) => {
      if (from !== to) edits.push({ line: i, alert: alert!.name, what, from, to });
    };
    const form = /^(\s*for: )(\S+)$/.exec(line);
    if (form) {
      const to = scaleDuration(form[2]!, factor);
      edit("for", form[2]!, to);
      return form[1]! + to;
    }
    if (!/^\s*expr: /.test(line)) return line;
    let out = line;
    const stepTo = scaleDuration(DEADMAN_STEP, factor);
    const steps = out.split(`:${DEADMAN_STEP}]`).length - 1;
    for (let k = 0; k < steps; k++) edit("step", DEADMAN_STEP, stepTo);
    out = out.split(`:${DEADMAN_STEP}]`).join(`:${stepTo}]`);
    // The step the age is counted from (one after the last present step), in seconds.
    const offset = `time() - ${DEADMAN_STEP_SECONDS} - `;
    const offsetTo = `time() - ${durationSeconds(stepTo)} - `;
    const offsets = out.split(offset).length - 1;
    for (let k = 0; k < offsets; k++) edit("step", String(DEADMAN_STEP_SECONDS), String(durationSeconds(stepTo)));
    out = out.split(offset).join(offsetTo);
    if (alert.unit === "seconds") {
      const tail = ` > ${alert.threshold.value}`;
      if (!out.endsWith(tail)) throw new Error(`${alert.name}: its expr does not end with "${tail}"`);
      const to = String(alert.threshold.value / factor);
      edit("threshold", String(alert.threshold.value), to);
      out = `${out.slice(0, -tail.length)} > ${to}`;
    }
    return out;
  });
  const missing = [...deadman.keys()].filter((n) => !seen.has(n));
  if (missing.length) throw new Error(`the rule file has no rule ${missing.join(", ")}: run npm run gen:infra`);
  return { text: lines.join("\n"), edits };
}
