/**
 * The Grafana panels of the dedup dashboard, built with `@grafana/grafana-foundation-sdk`: one
 * current-value stat and one chart per alert of `ALERT_LIST` (its expression, threshold lines and
 * runbook link, so a new alert appears with no edit here), then the charts of what the app shows
 * beside the alerts (results, duplicates by cause, DLQ, leases, handler time, consumer lag).
 */
import * as common from "@grafana/grafana-foundation-sdk/common";
import {
  DashboardLinkBuilder,
  FieldColorBuilder,
  FieldColorModeId,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  type Threshold,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { DataqueryBuilder, QueryEditorMode } from "@grafana/grafana-foundation-sdk/prometheus";
import * as stat from "@grafana/grafana-foundation-sdk/stat";
import * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import type { AlertThreshold, AlertUnit } from "@/lib/alert-model";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { withMatchers } from "./promql-filter";

/** The Prometheus data source every panel, query and variable uses, filled in on import. */
export const DS = { type: "prometheus", uid: "${DS_PROMETHEUS}" } as const;

/**
 * Grafana threshold steps are inclusive (`value >= step`) while an alert is strictly `> threshold`:
 * a threshold of 0 (the error alert) is coloured from just above 0, far below one event per 5-min
 * window (1/300 per second), far above float noise.
 */
export const ABOVE_ZERO_STEP = 1e-6;

/** How far above a threshold the y-axis reaches at least, so the line shows on a quiet series (grafana#12135). */
const SOFT_MAX_FACTOR = 1.2;

const SVC = 'service=~"$service"';
export const SVC_HANDLER = 'service=~"$service", handler=~"$handler"';
/** The app's consumer groups are `<service>.<handler>`: the variables select them by group id. */
const GROUP = 'consumergroup=~"$service\\\\.$handler"';

/**
 * The variables an alert's value follows: `$handler` only when the value has a handler label; a
 * value read from the consumer-group gauges (no service label) by the group id.
 */
export function alertMatchers(a: AlertThreshold): string {
  if (Object.values(KAFKA_METRIC_NAMES).some((n) => new RegExp(`\\b${n}\\b`).test(a.valueExpr))) return GROUP;
  return a.by.includes("handler") ? SVC_HANDLER : a.by.includes("service") ? SVC : "";
}

const GRAFANA_UNIT: Record<AlertUnit, string> = {
  ratio: "percentunit",
  per_second: "short",
  seconds: "s",
  count: "none",
};

/** Lays panels out left to right, a new line when the next one does not fit in 24 columns. */
export class Grid {
  private x = 0;
  private y = 0;
  private lineH = 0;
  private nextId = 1;
  /** Id and position of the next panel of width `w`, height `h`. */
  place(w: number, h: number): { id: number; gridPos: { x: number; y: number; w: number; h: number } } {
    if (this.x + w > 24) [this.x, this.y, this.lineH] = [0, this.y + this.lineH, 0];
    const gridPos = { x: this.x, y: this.y, w, h };
    this.x += w;
    this.lineH = Math.max(this.lineH, h);
    return { id: this.nextId++, gridPos };
  }
  /** Starts a new line. */
  newLine(): void {
    if (this.x > 0) [this.x, this.y, this.lineH] = [0, this.y + this.lineH, 0];
  }
}

function query(expr: string, legendFormat: string, i: number): DataqueryBuilder {
  return new DataqueryBuilder()
    .datasource(DS)
    .editorMode(QueryEditorMode.Code)
    .expr(expr)
    .legendFormat(legendFormat)
    .range()
    .refId(String.fromCharCode(65 + i));
}

function runbook(a: AlertThreshold): DashboardLinkBuilder[] {
  return [new DashboardLinkBuilder(`Runbook: ${a.name}`).url(a.runbookUrl).targetBlank(true)];
}

/** The alert's levels as threshold steps: normal (yellow, when documented and above 0), alert (red). */
function alertSteps(a: AlertThreshold, base: string): Threshold[] {
  const steps: Threshold[] = [{ value: null, color: base }];
  if (a.normal && a.normal.value > 0 && a.normal.value < a.threshold.value)
    steps.push({ value: a.normal.value, color: "#EAB839" });
  steps.push({ value: a.threshold.value > 0 ? a.threshold.value : ABOVE_ZERO_STEP, color: "red" });
  return steps;
}

function thresholds(steps: Threshold[]): ThresholdsConfigBuilder {
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps);
}

/** One stat per alert: the worst current value, coloured at the alert's levels. */
export function alertStat(a: AlertThreshold, grid: Grid): stat.PanelBuilder {
  const { id, gridPos } = grid.place(6, 4);
  const normal = a.normal ? ` Normal ${a.normal.label}.` : "";
  return new stat.PanelBuilder()
    .id(id)
    .gridPos(gridPos)
    .title(`${a.name}: worst now`)
    .description(
      `${a.title}, the worst of ${a.by.join("/")}. ${a.name} fires above ${a.threshold.label} for ${a.for}.${normal}`,
    )
    .datasource(DS)
    .links(runbook(a))
    .withTarget(query(`max(${withMatchers(a.valueExpr, alertMatchers(a))})`, "worst", 0))
    .unit(GRAFANA_UNIT[a.unit])
    .noValue("no data")
    .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds))
    .thresholds(thresholds(alertSteps(a, "green")))
    .colorMode(common.BigValueColorMode.Background)
    .graphMode(common.BigValueGraphMode.None)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]).fields("").values(false));
}

/** The stat of the pending and firing instances of every alert of the list. */
export function alertStateStat(alerts: readonly AlertThreshold[], grid: Grid): stat.PanelBuilder {
  const { id, gridPos } = grid.place(6, 4);
  return new stat.PanelBuilder()
    .id(id)
    .gridPos(gridPos)
    .title("Dedup alerts pending / firing")
    .description(
      `Prometheus' ALERTS series of ${alerts.map((a) => a.name).join(", ")} (rules: infra/prometheus/rules/dedup.yml).`,
    )
    .datasource(DS)
    .withTarget(
      query(
        `count by (alertname, alertstate) (ALERTS{${alertNameMatcher(alerts)}, ${SVC}})`,
        "{{alertname}} {{alertstate}}",
        0,
      ),
    )
    .unit("none")
    .noValue("none")
    .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds))
    .thresholds(
      thresholds([
        { value: null, color: "green" },
        { value: 1, color: "orange" },
      ]),
    )
    .colorMode(common.BigValueColorMode.Background)
    .graphMode(common.BigValueGraphMode.None)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]).fields("").values(false));
}

/** `alertname=~"A|B|…"` over the list. */
export function alertNameMatcher(alerts: readonly AlertThreshold[]): string {
  return `alertname=~"${alerts.map((a) => a.name).join("|")}"`;
}

/** One time-series chart: its title, description, queries and unit. */
export interface ChartSpec {
  title: string;
  description: string;
  targets: Array<{ expr: string; legend: string }>;
  unit: string;
  stacked?: boolean;
}

/** A time-series panel of half the width, placed on the grid. */
export function chart(c: ChartSpec, grid: Grid): timeseries.PanelBuilder {
  const { id, gridPos } = grid.place(12, 8);
  return new timeseries.PanelBuilder()
    .id(id)
    .gridPos(gridPos)
    .title(c.title)
    .description(c.description)
    .datasource(DS)
    .targets(c.targets.map((t, i) => query(t.expr, t.legend, i)))
    .unit(c.unit)
    .min(0)
    .axisSoftMin(0)
    .fillOpacity(c.stacked ? 60 : 10)
    .lineWidth(1)
    .showPoints(common.VisibilityMode.Never)
    .spanNulls(false)
    .thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Off))
    .stacking(
      new common.StackingConfigBuilder()
        .mode(c.stacked ? common.StackingMode.Normal : common.StackingMode.None)
        .group("A"),
    )
    .legend(
      new common.VizLegendOptionsBuilder()
        .calcs(["lastNotNull", "max", "mean"])
        .displayMode(common.LegendDisplayMode.Table)
        .placement(common.LegendPlacement.Bottom)
        .showLegend(true),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending),
    );
}

/** One chart per alert: its value per `by` labels, with the normal and alert lines drawn. */
export function alertChart(a: AlertThreshold, grid: Grid): timeseries.PanelBuilder {
  const drawn = a.threshold.value > 0;
  const lines = [
    a.normal && a.normal.value > 0 ? `${a.normal.label} (yellow)` : "",
    drawn ? `${a.threshold.label} (red, ${a.name} after ${a.for})` : "",
  ].filter(Boolean);
  const p = chart(
    {
      title: a.title,
      description: `${a.title}, per ${a.by.join("/")}.${lines.length ? ` Lines: ${lines.join(" and ")}; the axis always reaches the alert line.` : ` ${a.name} fires above ${a.threshold.label} for ${a.for}.`}`,
      targets: [{ expr: withMatchers(a.valueExpr, alertMatchers(a)), legend: a.by.map((l) => `{{${l}}}`).join(" / ") }],
      unit: GRAFANA_UNIT[a.unit],
    },
    grid,
  )
    .links(runbook(a))
    .thresholds(thresholds(alertSteps(a, "transparent")))
    .thresholdsStyle(
      new common.GraphThresholdsStyleConfigBuilder().mode(
        drawn ? common.GraphThresholdsStyleMode.LineAndArea : common.GraphThresholdsStyleMode.Off,
      ),
    );
  return drawn ? p.axisSoftMax(a.threshold.value * SOFT_MAX_FACTOR) : p;
}
