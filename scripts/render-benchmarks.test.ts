import { describe, expect, it } from "vitest";
import { FIGURES, renderBenchmarks, verdict, type BenchResult } from "./render-benchmarks";

const row = (name: string, value: number | null, extra: Partial<BenchResult> = {}): BenchResult => ({ name, value, unit: "ratio", reference: null, ratio: null, ...extra });

describe("verdict", () => {
  it("says by how much a minimum is missed, and when it is met", () => {
    expect(verdict({ value: 0.6, target: 0.8, goal: "min", unit: "ratio" })).toBe("**missed** by 0.200 (25% of the target)");
    expect(verdict({ value: 0.8, target: 0.8, goal: "min", unit: "ratio" })).toBe("met");
  });

  it("judges a signed error by its magnitude", () => {
    expect(verdict({ value: -0.32, target: 0.1, goal: "abs-max", unit: "fraction" })).toMatch(/^\*\*missed\*\* by 0.220/);
    expect(verdict({ value: -0.09, target: 0.1, goal: "abs-max", unit: "fraction" })).toBe("met");
  });

  it("never calls a figure without a value met", () => {
    expect(verdict({ value: null, target: 3, goal: "max", unit: "us" })).toBe("**not measured**");
  });
});

describe("renderBenchmarks", () => {
  it("lists every required figure, marking the ones a run did not produce as not measured", () => {
    const md = renderBenchmarks([row("consumer.with_dedup_vs_raw_kafkajs", 0.25, { reference: 140_000, ratio: 0.25, command: "npm run bench:consumer" })]);
    for (const name of Object.keys(FIGURES)) expect(md).toContain(`\`${name}\``);
    const consumerLine = md.split("\n").find((l) => l.startsWith("| `consumer.with_dedup_vs_raw_kafkajs`"))!;
    expect(consumerLine).toContain("**missed** by 0.250");
    expect(consumerLine).toContain("`npm run bench:consumer`");
    const uiLine = md.split("\n").find((l) => l.startsWith("| `ui.overview_first_load_js_kb_gz`"))!;
    expect(uiLine).toContain("**not measured**");
  });

  it("keeps the table intact: no cell introduces an unescaped pipe", () => {
    const md = renderBenchmarks(Object.keys(FIGURES).map((n) => row(n, 1, { reference: 1, ratio: 1 })));
    const header = md.split("\n").find((l) => l.startsWith("| Figure | Value"))!;
    const cols = header.split("|").length;
    for (const l of md.split("\n").filter((x) => x.startsWith("| `"))) {
      if (Object.keys(FIGURES).some((n) => l.startsWith(`| \`${n}\``))) expect(l.split("|").length).toBe(cols);
    }
  });
});
