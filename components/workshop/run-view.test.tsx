import { describe, expect, it } from "vitest";
import { runSeriesSummary } from "./run-view";

describe("the run counters' line never reads '0 series' under tiles that count", () => {
  const series = (...values: number[]) =>
    values.map((value, i) => ({ name: "messages_processed_total", labels: { result: String(i) }, value }));
  it("counts the series above zero", () => {
    expect(runSeriesSummary({ status: "done", series: series(3, 0, 5) })).toBe(
      "Run counters from the workshop registry (2 series above 0; not exported to Prometheus)",
    );
  });
  it("a view without counters says none were counted yet, or none kept, and that the tiles are the probe's", () => {
    const running = runSeriesSummary({ status: "running", series: [] });
    const done = runSeriesSummary({ status: "done", series: series(0) });
    for (const t of [running, done]) {
      expect(t).not.toMatch(/\b0 (non-zero )?series/);
      expect(t).toContain("the tiles above are the run's own probe");
    }
    expect(running).toContain("none counted yet");
    expect(done).toContain("none kept for this run");
  });
});
