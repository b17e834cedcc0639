/** How docs/BENCHMARKS.md writes a figure, a target and a verdict, and how it looks rows up. */
import type { BenchResult } from "./figures";

/** A figure as the tables write it: thousands grouped, 1–3 decimals by size, the unit unless a ratio. */
export function num(v: number | null | undefined, unit = ""): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "n/a";
  const abs = Math.abs(v);
  const s =
    abs >= 1000
      ? Math.round(v).toLocaleString("en-US")
      : abs >= 10
        ? v.toFixed(1)
        : abs >= 1
          ? v.toFixed(2)
          : v.toFixed(3);
  return unit && !["ratio", "fraction"].includes(unit) ? `${s} ${unit}` : s;
}

/** "≥ 0.500", "≤ 100.0 ms", "within ±0.100". */
export function goalText(target: number, goal: string, unit: string): string {
  if (goal === "abs-max") return `within ±${num(target, unit)}`;
  return `${goal === "min" ? "≥" : "≤"} ${num(target, unit)}`;
}

/** "met" / "missed by …" for a figure with a target. */
export function verdict(r: Pick<BenchResult, "value" | "target" | "goal" | "unit">): string {
  if (r.target === undefined || r.target === null || !r.goal) return "—";
  if (r.value === null || !Number.isFinite(r.value)) return "**not measured**";
  const v = r.goal === "abs-max" ? Math.abs(r.value) : r.value;
  const met = r.goal === "min" ? v >= r.target : v <= r.target;
  if (met) return "met";
  const by = r.goal === "min" ? r.target - v : v - r.target;
  const rel = by / r.target;
  return `**missed** by ${num(by, r.unit)} (${(100 * rel).toFixed(0)}% of the target)`;
}

/** The row named `name`, if the run has it. */
export const get = (rs: readonly BenchResult[], name: string) => rs.find((r) => r.name === name);
/** A row's `detail`, typed by the caller; `{}` without the row. */
export const detailOf = <T>(r: BenchResult | undefined) => (r?.detail ?? {}) as T;
/** The run's core count (the `machine.nproc` row), "?" when the run has no machine row. */
export const nprocOf = (rs: readonly BenchResult[]) => get(rs, "machine.nproc")?.value ?? "?";
