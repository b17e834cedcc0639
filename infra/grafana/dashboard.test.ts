import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ALERTS, ERROR_REASONS, METRIC_NAMES } from "@/lib/thresholds";
import { ERROR_STAT_RED_STEP } from "./dashboard";

// The committed file, as an SRE would import it (gen-infra.test.ts checks it equals the generator's output).
const json = readFileSync(fileURLToPath(new URL("./dedup-health.json", import.meta.url)), "utf8");

interface Step {
  color: string;
  value: number | null;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets: { expr: string; refId: string; datasource: { uid: string } }[];
  fieldConfig: {
    defaults: {
      unit: string;
      thresholds: { mode: string; steps: Step[] };
      custom?: { axisSoftMax?: number; thresholdsStyle?: { mode: string }; stacking?: { mode: string } };
    };
    overrides: { matcher: { options: string } }[];
  };
  options: { legend?: { calcs: string[]; showLegend: boolean } };
}
interface Variable {
  name: string;
  type: string;
  query: string;
  datasource: { uid: string };
  includeAll: boolean;
}
const d = JSON.parse(json) as {
  __inputs: { name: string; type: string; pluginId: string }[];
  __requires: { id: string; version: string }[];
  uid: string;
  title: string;
  schemaVersion: number;
  refresh: string;
  time: { from: string; to: string };
  timepicker: { refresh_intervals: string[] };
  templating: { list: Variable[] };
  panels: Panel[];
};

function panel(title: string): Panel {
  const p = d.panels.find((x) => x.title === title);
  if (!p) throw new Error(`no panel "${title}"; panels: ${d.panels.map((x) => x.title).join(", ")}`);
  return p;
}

function stepValues(p: Panel): (number | null)[] {
  return p.fieldConfig.defaults.thresholds.steps.map((s) => s.value);
}

/** Metric names a PromQL expression selects (identifiers followed by `{`, `[` or `)` after a paren). */
function metricsIn(expr: string): string[] {
  const noStrings = expr.replace(/"[^"]*"/g, '""');
  const names = noStrings.match(/\b[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*[{[])/g) ?? [];
  return names.filter((n) => !["by", "without"].includes(n));
}

describe("Grafana dashboard infra/grafana/dedup-health.json", () => {
  it("is importable: a Prometheus datasource input, every query bound to it, Grafana 10+ schema", () => {
    expect(d.__inputs).toEqual([expect.objectContaining({ name: "DS_PROMETHEUS", type: "datasource", pluginId: "prometheus" })]);
    expect(d.__requires.find((r) => r.id === "grafana")?.version).toBe("10.0.0");
    expect(d.schemaVersion).toBeGreaterThanOrEqual(38);
    expect(d.uid).toBe("dedup-health");
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of d.panels) {
      expect(p.datasource.uid).toBe("${DS_PROMETHEUS}");
      for (const t of p.targets) expect(t.datasource.uid).toBe("${DS_PROMETHEUS}");
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
    }
  });

  it("has `service` and `handler` variables from label_values of the spec's metrics", () => {
    const vars = Object.fromEntries(d.templating.list.map((v) => [v.name, v]));
    expect(Object.keys(vars)).toEqual(["service", "handler"]);
    expect(vars.service?.query).toBe(`label_values(${METRIC_NAMES.processed}, service)`);
    expect(vars.handler?.query).toBe(`label_values(${METRIC_NAMES.processed}{service=~"$service"}, handler)`);
    for (const v of d.templating.list) {
      expect(v.type).toBe("query");
      expect(v.includeAll).toBe(true);
      expect(v.datasource.uid).toBe("${DS_PROMETHEUS}");
    }
  });

  it("queries only the metric names of spec §7 (and ALERTS for the alert panel), filtered by the variables", () => {
    const allowed = new Set<string>([...Object.values(METRIC_NAMES), `${METRIC_NAMES.checkDuration}_bucket`, "ALERTS"]);
    const exprs = d.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(8);
    for (const e of exprs) {
      const metrics = metricsIn(e);
      expect(metrics.length, e).toBeGreaterThan(0);
      for (const m of metrics) expect(allowed, `${m} in ${e}`).toContain(m);
      expect(e, "every query follows the service variable").toContain('service=~"$service"');
    }
  });

  it("draws the duplicate ratio with the 1% normal and 10% alert lines, the axis reaching 10%", () => {
    const p = panel("Duplicate ratio");
    expect(p.type).toBe("timeseries");
    expect(p.fieldConfig.defaults.unit).toBe("percentunit");
    expect(stepValues(p)).toEqual([null, ALERTS.duplicateRate.normal.value, ALERTS.duplicateRate.threshold.value]);
    expect(p.fieldConfig.defaults.custom?.thresholdsStyle?.mode).toMatch(/line|dashed/);
    expect(p.fieldConfig.defaults.custom?.axisSoftMax).toBeGreaterThan(ALERTS.duplicateRate.threshold.value);
    expect(p.targets[0]?.expr).toContain('handler=~"$handler"');
  });

  it("draws the Redis check p99 with the 50 ms line, the axis reaching it", () => {
    const p = panel("Redis check latency (p99, p50)");
    expect(p.fieldConfig.defaults.unit).toBe("s");
    expect(stepValues(p)).toEqual([null, ALERTS.redisLatency.threshold.value]);
    expect(p.fieldConfig.defaults.custom?.thresholdsStyle?.mode).toMatch(/line|dashed/);
    expect(p.fieldConfig.defaults.custom?.axisSoftMax).toBeGreaterThan(ALERTS.redisLatency.threshold.value);
    expect(p.targets[0]?.expr).toBe(
      'histogram_quantile(0.99, sum by (le, service) (rate(deduplication_check_duration_seconds_bucket{service=~"$service"}[5m])))',
    );
  });

  it("stacks dedup errors by reason with a colour per documented reason", () => {
    const p = panel("Dedup errors by reason");
    expect(p.fieldConfig.defaults.custom?.stacking?.mode).toBe("normal");
    expect(p.targets[0]?.expr).toContain("sum by (reason)");
    expect(p.fieldConfig.overrides.map((o) => o.matcher.options)).toEqual([...ERROR_REASONS]);
  });

  it("stacks the processed rate by result", () => {
    const p = panel("Processed rate by result");
    expect(p.targets[0]?.expr).toBe(
      'sum by (result) (rate(messages_processed_total{service=~"$service", handler=~"$handler"}[5m]))',
    );
    expect(p.fieldConfig.defaults.custom?.stacking?.mode).toBe("normal");
  });

  it("colours the current-value stats at the same thresholds as the alerts", () => {
    expect(stepValues(panel("Duplicate ratio now (worst handler)"))).toEqual([
      null,
      ALERTS.duplicateRate.normal.value,
      ALERTS.duplicateRate.threshold.value,
    ]);
    expect(stepValues(panel("Redis check p99 now (worst service)"))).toEqual([null, ALERTS.redisLatency.threshold.value]);
    // Grafana steps are inclusive; the alert is strictly > 0: red just above 0, below one error per 5 min.
    const red = stepValues(panel("Dedup errors/s now"))[1] ?? NaN;
    expect(red).toBe(ERROR_STAT_RED_STEP);
    expect(red).toBeGreaterThan(ALERTS.redisErrors.threshold.value);
    expect(red).toBeLessThan(1 / 300);
  });

  it("shows legends with last, max and mean, defaults to the last hour and allows a 5 s refresh", () => {
    for (const p of d.panels.filter((x) => x.type === "timeseries")) {
      expect(p.options.legend?.calcs).toEqual(["lastNotNull", "max", "mean"]);
      expect(p.options.legend?.showLegend).toBe(true);
    }
    expect(d.time).toEqual({ from: "now-1h", to: "now" });
    expect(d.timepicker.refresh_intervals).toContain("5s");
    expect(d.timepicker.refresh_intervals).toContain(d.refresh);
  });
});
