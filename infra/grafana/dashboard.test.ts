import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as common from "@grafana/grafana-foundation-sdk/common";
import {
  DashboardCursorSync,
  FieldColorModeId,
  ThresholdsMode,
  VariableRefresh,
  VariableSort,
  type Dashboard,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { QueryEditorMode } from "@grafana/grafana-foundation-sdk/prometheus";
import { describe, expect, expectTypeOf, it } from "vitest";
import { ALERT_LIST, ALERTS } from "@/lib/thresholds";
import { METRIC_NAMES, METRIC_NAMES as LIBRARY_METRIC_NAMES } from "@/names/dedup";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { runbookUrl } from "@/lib/alert-model";
import { runbookBase, withRunbookBase } from "@/scripts/gen-infra";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { plantedDlqAlert } from "@/server/testing/planted-alert";
import { HANDLER_TIME_METRIC } from "@/lib/query-exprs";
import { ABOVE_ZERO_STEP, dashboard, renderDashboard } from "./dashboard";

const CONSUMER_LAG_METRIC = KAFKA_METRIC_NAMES.lag;

// The committed file, as an SRE would import it (gen-infra.test.ts checks it equals the generator's output).
const json = readFileSync(fileURLToPath(new URL("./dedup-health.json", import.meta.url)), "utf8");

interface Step {
  color: string;
  value: number | null;
}
interface Target {
  expr: string;
  refId: string;
  editorMode: string;
  datasource: { uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  links: { title: string; url: string }[];
  targets: Target[];
  fieldConfig: {
    defaults: {
      unit: string;
      color?: { mode: string };
      thresholds: { mode: string; steps: Step[] };
      custom?: { axisSoftMax?: number; thresholdsStyle?: { mode: string }; stacking?: { mode: string } };
    };
  };
  options: {
    legend?: { calcs: string[]; showLegend: boolean; displayMode: string };
    tooltip?: { mode: string };
    colorMode?: string;
    graphMode?: string;
  };
}
interface Variable {
  name: string;
  type: string;
  query: string;
  datasource: { uid: string };
  includeAll: boolean;
  refresh: number;
  sort: number;
}
interface Annotation {
  name: string;
  expr?: string;
  datasource: { uid: string };
}
interface DashboardJson {
  __inputs: { name: string; type: string; pluginId: string }[];
  __requires: { id: string; version: string }[];
  uid: string;
  schemaVersion: number;
  graphTooltip: number;
  refresh: string;
  time: { from: string; to: string };
  timepicker: { refresh_intervals: string[] };
  templating: { list: Variable[] };
  annotations: { list: Annotation[] };
  panels: Panel[];
}
const parse = (text: string) => JSON.parse(text) as DashboardJson;
const d = parse(json);

function panel(title: string, from: DashboardJson = d): Panel {
  const p = from.panels.find((x) => x.title === title);
  if (!p) throw new Error(`no panel "${title}"; panels: ${from.panels.map((x) => x.title).join(", ")}`);
  return p;
}
const stepValues = (p: Panel) => p.fieldConfig.defaults.thresholds.steps.map((s) => s.value);

/** Metric names a PromQL expression selects (identifiers followed by `{` or `[`). */
function metricsIn(expr: string): string[] {
  const noStrings = expr.replace(/"[^"]*"/g, '""');
  return (noStrings.match(/\b[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*[{[])/g) ?? []).filter(
    (n) => !["by", "without"].includes(n),
  );
}

describe("Grafana dashboard infra/grafana/dedup-health.json", () => {
  it("is the SDK's Dashboard object as built, behind the import header: the file round-trips", () => {
    expectTypeOf(dashboard()).toEqualTypeOf<Dashboard>();
    const { __inputs, __elements, __requires, ...rest } = JSON.parse(json) as Record<string, unknown>;
    expect(__inputs).toEqual([
      expect.objectContaining({ name: "DS_PROMETHEUS", type: "datasource", pluginId: "prometheus" }),
    ]);
    expect([__elements, __requires]).not.toContain(undefined);
    expect(rest).toEqual(JSON.parse(JSON.stringify(dashboard(withRunbookBase()))));
  });

  it("holds only values the SDK's types allow in its enum-typed fields", () => {
    const allowed = <E extends Record<string, string | number>>(e: E) => Object.values(e);
    expect(allowed(DashboardCursorSync)).toContain(d.graphTooltip);
    for (const v of d.templating.list) {
      expect(allowed(VariableRefresh)).toContain(v.refresh);
      expect(allowed(VariableSort)).toContain(v.sort);
    }
    for (const p of d.panels) {
      if (p.fieldConfig.defaults.thresholds)
        expect(allowed(ThresholdsMode)).toContain(p.fieldConfig.defaults.thresholds.mode);
      for (const t of p.targets) expect(allowed(QueryEditorMode)).toContain(t.editorMode);
      if (p.type === "stat") {
        expect(allowed(common.BigValueColorMode)).toContain(p.options.colorMode);
        expect(allowed(common.BigValueGraphMode)).toContain(p.options.graphMode);
        expect(allowed(FieldColorModeId)).toContain(p.fieldConfig.defaults.color?.mode);
      } else {
        expect(p.type).toBe("timeseries");
        expect(allowed(common.LegendDisplayMode)).toContain(p.options.legend?.displayMode);
        expect(allowed(common.TooltipDisplayMode)).toContain(p.options.tooltip?.mode);
        expect(allowed(common.StackingMode)).toContain(p.fieldConfig.defaults.custom?.stacking?.mode);
        expect(allowed(common.GraphThresholdsStyleMode)).toContain(
          p.fieldConfig.defaults.custom?.thresholdsStyle?.mode,
        );
      }
    }
  });

  it("is importable: every query bound to the data source input, panels on the 24-column grid, none overlapping", () => {
    expect(d.__requires.find((r) => r.id === "grafana")?.version).toBe("10.0.0");
    expect(d.schemaVersion).toBeGreaterThanOrEqual(38);
    expect(d.uid).toBe("dedup-health");
    expect(new Set(d.panels.map((p) => p.id)).size).toBe(d.panels.length);
    const cells = new Set<string>();
    for (const p of d.panels) {
      expect(p.datasource.uid).toBe("${DS_PROMETHEUS}");
      for (const t of p.targets) expect(t.datasource.uid).toBe("${DS_PROMETHEUS}");
      const { x, y, w, h } = p.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++) for (let j = y; j < y + h; j++) cells.add(`${i},${j}`);
    }
    expect(cells.size, "panels overlap").toBe(d.panels.reduce((n, p) => n + p.gridPos.w * p.gridPos.h, 0));
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

  it("queries only the app's metric names (and ALERTS), every one but the lag chart filtered by $service", () => {
    const names = [
      ...Object.values(LIBRARY_METRIC_NAMES),
      ...Object.values(KAFKA_METRIC_NAMES),
      ...Object.values(OBSERVE_METRIC_NAMES),
      HANDLER_TIME_METRIC,
      HANDLER_INFO_METRIC,
    ];
    // The deadman rules read Prometheus' own `up` too.
    const allowed = new Set<string>([
      ...names,
      ...names.map((n) => `${n}_bucket`),
      ...names.map((n) => `${n}_count`),
      "ALERTS",
      "up",
    ]);
    const exprs = d.panels.flatMap((p) => p.targets.map((t) => t.expr));
    // An alert not per service (a DLQ topic's age, the dashboard's own scrape job) is charted whole.
    const unscopedAlerts = ALERT_LIST.filter((a) => !a.by.includes("service")).map((a) => a.valueExpr);
    for (const e of exprs) {
      // The lag chart selects its gauge bare (no matchers): checked whole in the charts case below.
      if (e === `sum by (consumergroup, topic) (${CONSUMER_LAG_METRIC})`) continue;
      const metrics = metricsIn(e);
      expect(metrics.length, e).toBeGreaterThan(0);
      for (const m of metrics) expect(allowed, `${m} in ${e}`).toContain(m);
      // A DLQ topic's gauges (the oldest open record) carry the consumer topic, no service: a $service filter would blank them.
      if (unscopedAlerts.some((x) => e.includes(x))) {
        expect(e, "a gauge without a service label is not filtered by it").not.toContain("$service");
        continue;
      }
      // A consumer group's gauges carry no service label: they follow the variables by group id (<service>.<handler>).
      const follows = metrics.some((m) => (Object.values(KAFKA_METRIC_NAMES) as string[]).includes(m))
        ? 'consumergroup=~"$service\\\\.$handler"'
        : 'service=~"$service"';
      expect(e, "every query follows the service variable").toContain(follows);
    }
  });

  it("gives every alert a stat and a chart of its own expression, with its runbook link and its levels", () => {
    for (const a of ALERT_LIST) {
      const chart = panel(a.title);
      const stat = panel(`${a.name}: worst now`);
      for (const p of [chart, stat])
        expect(p.links.map((l) => l.url)).toEqual([runbookUrl(a.runbookAnchor, runbookBase())]);
      expect(chart.type).toBe("timeseries");
      const unique = (e: string) => [...new Set(metricsIn(e))].sort();
      expect(unique(chart.targets[0]!.expr)).toEqual(unique(a.valueExpr));
      expect(stat.targets[0]!.expr).toBe(`max(${chart.targets[0]!.expr})`);
    }
  });

  it("draws the thresholds as before: ratio 1% and 10% lines, p99 50 ms line, axes reaching them; errors red just above 0", () => {
    const dup = panel(ALERTS.duplicateRate.title);
    expect(dup.fieldConfig.defaults.unit).toBe("percentunit");
    expect(stepValues(dup)).toEqual([null, ALERTS.duplicateRate.normal.value, ALERTS.duplicateRate.threshold.value]);
    expect(dup.fieldConfig.defaults.custom?.thresholdsStyle?.mode).toMatch(/line|dashed/);
    expect(dup.fieldConfig.defaults.custom?.axisSoftMax).toBeGreaterThan(ALERTS.duplicateRate.threshold.value);
    expect(dup.targets[0]?.expr).toContain('handler=~"$handler"');
    const lat = panel(ALERTS.redisLatency.title);
    expect(lat.fieldConfig.defaults.unit).toBe("s");
    expect(stepValues(lat)).toEqual([null, ALERTS.redisLatency.threshold.value]);
    expect(lat.fieldConfig.defaults.custom?.axisSoftMax).toBeGreaterThan(ALERTS.redisLatency.threshold.value);
    expect(lat.targets[0]?.expr).toBe(
      'histogram_quantile(0.99, sum by (le, service) (rate(deduplication_check_duration_seconds_bucket{service=~"$service"}[5m])))',
    );
    expect(stepValues(panel(`${ALERTS.duplicateRate.name}: worst now`))).toEqual(stepValues(dup));
    // Grafana steps are inclusive; the alert is strictly > 0: red just above 0, below one error per 5 min.
    const red = stepValues(panel(`${ALERTS.redisErrors.name}: worst now`))[1] ?? NaN;
    expect(red).toBe(ABOVE_ZERO_STEP);
    expect(red).toBeLessThan(1 / 300);
    expect(panel(ALERTS.redisErrors.title).fieldConfig.defaults.custom?.thresholdsStyle?.mode).toBe("off");
  });

  it("has the app's other charts: results, duplicates by cause, DLQ by reason, leases, handler time, lag", () => {
    const exprs = (t: string) =>
      panel(t)
        .targets.map((x) => x.expr)
        .join(" ");
    expect(exprs("Processed rate by result")).toContain(`sum by (result) (rate(${LIBRARY_METRIC_NAMES.processed}{`);
    expect(exprs("Duplicates by cause")).toContain(`sum by (cause) (rate(${LIBRARY_METRIC_NAMES.duplicatesByCause}{`);
    expect(exprs("DLQ writes by reason")).toContain(`sum by (reason_poisoned) (rate(${LIBRARY_METRIC_NAMES.poisoned}{`);
    expect(metricsIn(exprs("Leases")).sort()).toEqual(
      [LIBRARY_METRIC_NAMES.inProgress, LIBRARY_METRIC_NAMES.leaseLost, LIBRARY_METRIC_NAMES.released].sort(),
    );
    expect(exprs("Handler time (p99, p50)")).toContain(
      `histogram_quantile(0.99, sum by (le, service, handler) (rate(${HANDLER_TIME_METRIC}_bucket{`,
    );
    expect(exprs("Consumer lag")).toBe(`sum by (consumergroup, topic) (${CONSUMER_LAG_METRIC})`);
    for (const p of d.panels.filter((x) => x.type === "timeseries")) {
      expect(p.options.legend?.calcs).toEqual(["lastNotNull", "max", "mean"]);
      expect(p.options.legend?.showLegend).toBe(true);
    }
    expect(d.time).toEqual({ from: "now-1h", to: "now" });
    expect(d.timepicker.refresh_intervals).toContain("5s");
    expect(d.timepicker.refresh_intervals).toContain(d.refresh);
  });

  it("marks when an alert of the list was firing and when pending (annotations of ALERTS)", () => {
    const marks = d.annotations.list.filter((a) => a.expr);
    expect(marks.map((a) => a.name)).toEqual(["Dedup alerts firing", "Dedup alerts pending"]);
    for (const [m, state] of [
      [marks[0]!, "firing"],
      [marks[1]!, "pending"],
    ] as const) {
      expect(m.datasource.uid).toBe("${DS_PROMETHEUS}");
      expect(m.expr).toContain(`ALERTS{alertstate="${state}"`);
      for (const a of ALERT_LIST) expect(m.expr).toContain(a.name);
    }
  });

  it("picks up an alert added to the list with no other edit: its stat, its chart, the state stat and the marks", () => {
    const planted = plantedDlqAlert({ value: 5, label: "5/s" });
    const withIt = parse(renderDashboard([...ALERT_LIST, planted]));
    const chart = panel(planted.title, withIt);
    expect(chart.targets[0]!.expr).toContain(
      `${LIBRARY_METRIC_NAMES.poisoned}{service=~"$service", handler=~"$handler"}`,
    );
    expect(stepValues(chart)).toEqual([null, 5]);
    expect(panel(`${planted.name}: worst now`, withIt).links[0]!.url).toBe(planted.runbookUrl);
    expect(panel("Dedup alerts pending / firing", withIt).targets[0]!.expr).toContain(planted.name);
    for (const m of withIt.annotations.list.filter((a) => a.expr)) expect(m.expr).toContain(planted.name);
    expect(withIt.panels.length).toBe(d.panels.length + 2);
  });
});
