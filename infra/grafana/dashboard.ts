/**
 * Builds `infra/grafana/dedup-health.json`, a Grafana 10+ dashboard importable through
 * Dashboards → Import (it asks for the Prometheus data source: `__inputs` DS_PROMETHEUS).
 * Every threshold line comes from `lib/thresholds.ts`; `npm run gen:infra` writes the file.
 */
import {
  ALERT_LIST,
  ALERTS,
  checkQuantileExpr,
  duplicateRatioExpr,
  ERROR_REASONS,
  errorRateExpr,
  METRIC_NAMES,
  PROCESSED_RESULTS,
  RATE_WINDOW,
} from "@/lib/thresholds";

/** Stable dashboard uid: links such as `/d/dedup-health?var-service=…` keep working across re-imports. */
export const DASHBOARD_UID = "dedup-health";

/** The Prometheus data source every panel and variable uses, filled in on import. */
const DS = { type: "prometheus", uid: "${DS_PROMETHEUS}" } as const;

/**
 * Grafana threshold steps are inclusive (`value >= step`) while the error alert is strictly
 * `> 0`, so the red step of the error stat sits just above 0: far below one error per 5-min window
 * (1/300 per second), far above float noise.
 */
export const ERROR_STAT_RED_STEP = 1e-6;

/** How far above a threshold the y-axis reaches at least, so the line shows on a quiet series (grafana#12135). */
const SOFT_MAX_FACTOR = 1.2;

// Label filters from the dashboard variables. The check-duration histogram and the error counter
// have no `handler` label (spec §7), so only `service` filters them.
const SVC = 'service=~"$service"';
const SVC_HANDLER = 'service=~"$service", handler=~"$handler"';

const COLORS = {
  success: "green",
  error: "red",
  deduplicated: "blue",
  redis_timeout: "orange",
  redis_conn: "red",
  marshal: "purple",
} as const satisfies Record<(typeof PROCESSED_RESULTS)[number] | (typeof ERROR_REASONS)[number], string>;

interface Target {
  expr: string;
  legendFormat: string;
}

interface Step {
  color: string;
  value: number | null;
}

function targets(ts: Target[]) {
  return ts.map((t, i) => ({
    datasource: DS,
    editorMode: "code",
    expr: t.expr,
    legendFormat: t.legendFormat,
    range: true,
    refId: String.fromCharCode(65 + i),
  }));
}

function colorOverrides(names: readonly (keyof typeof COLORS)[]) {
  return names.map((n) => ({
    matcher: { id: "byName", options: n },
    properties: [{ id: "color", value: { fixedColor: COLORS[n], mode: "fixed" } }],
  }));
}

function runbookLink(a: (typeof ALERT_LIST)[number]) {
  return [{ title: `Runbook: ${a.name}`, url: a.runbookUrl, targetBlank: true }];
}

/** What every panel names: its id, title, description and (runbook) links. */
interface PanelSpec {
  id: number;
  title: string;
  description: string;
  links?: ReturnType<typeof runbookLink>;
}

/** The fields every panel starts with: id, type, title, description, the datasource, position, links. */
function panel(type: string, p: PanelSpec, gridPos: { x: number; y: number; w: number; h: number }) {
  return { id: p.id, type, title: p.title, description: p.description, datasource: DS, gridPos, links: p.links ?? [] };
}

interface TimeseriesSpec extends PanelSpec {
  gridPos: { x: number; y: number; w: number; h: number };
  targets: Target[];
  unit: string;
  steps?: Step[];
  softMax?: number;
  stacked?: boolean;
  overrides?: ReturnType<typeof colorOverrides>;
}

function timeseries(p: TimeseriesSpec) {
  return {
    ...panel("timeseries", p, p.gridPos),
    fieldConfig: {
      defaults: {
        color: { mode: "palette-classic" },
        custom: {
          axisPlacement: "auto",
          axisSoftMin: 0,
          ...(p.softMax !== undefined ? { axisSoftMax: p.softMax } : {}),
          drawStyle: "line",
          fillOpacity: p.stacked ? 60 : 10,
          lineWidth: 1,
          pointSize: 4,
          showPoints: "never",
          spanNulls: false,
          stacking: { group: "A", mode: p.stacked ? "normal" : "none" },
          thresholdsStyle: { mode: p.steps ? "line+area" : "off" },
        },
        min: 0,
        thresholds: { mode: "absolute", steps: p.steps ?? [{ color: "green", value: null }] },
        unit: p.unit,
      },
      overrides: p.overrides ?? [],
    },
    options: {
      legend: { calcs: ["lastNotNull", "max", "mean"], displayMode: "table", placement: "bottom", showLegend: true },
      tooltip: { mode: "multi", sort: "desc" },
    },
    targets: targets(p.targets),
  };
}

interface StatSpec extends PanelSpec {
  x: number;
  targets: Target[];
  unit: string;
  steps: Step[];
  noValue?: string;
}

function stat(p: StatSpec) {
  return {
    ...panel("stat", p, { x: p.x, y: 0, w: 6, h: 4 }),
    fieldConfig: {
      defaults: {
        color: { mode: "thresholds" },
        ...(p.noValue ? { noValue: p.noValue } : {}),
        thresholds: { mode: "absolute", steps: p.steps },
        unit: p.unit,
      },
      overrides: [],
    },
    options: {
      colorMode: "background",
      graphMode: "none",
      justifyMode: "auto",
      orientation: "auto",
      reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false },
      textMode: "auto",
    },
    targets: targets(p.targets),
  };
}

/** Steps of the duplicate ratio: normal below 1% (no shading), yellow from 1%, red from the 10% alert. */
function ratioSteps(): Step[] {
  return [
    { color: "transparent", value: null },
    { color: "#EAB839", value: ALERTS.duplicateRate.normal.value },
    { color: "red", value: ALERTS.duplicateRate.threshold.value },
  ];
}

function latencySteps(): Step[] {
  return [
    { color: "transparent", value: null },
    { color: "red", value: ALERTS.redisLatency.threshold.value },
  ];
}

/** The dashboard panels: a row of current values, then the four charts of the overview. */
export function panels() {
  const dup = ALERTS.duplicateRate;
  const lat = ALERTS.redisLatency;
  const err = ALERTS.redisErrors;
  const alertNames = ALERT_LIST.map((a) => a.name).join("|");
  return [
    stat({
      id: 1,
      title: "Duplicate ratio now (worst handler)",
      description: `max of ${METRIC_NAMES.deduplicated} / ${METRIC_NAMES.processed} over ${RATE_WINDOW}. Normal ${dup.normal.label}; ${dup.name} fires above ${dup.threshold.label} for ${dup.for}.`,
      x: 0,
      targets: [{ expr: `max(${duplicateRatioExpr(SVC_HANDLER)})`, legendFormat: "worst handler" }],
      unit: "percentunit",
      steps: [{ color: "green", value: null }, ...ratioSteps().slice(1)],
      noValue: "no traffic",
      links: runbookLink(dup),
    }),
    stat({
      id: 2,
      title: "Redis check p99 now (worst service)",
      description: `${lat.name} fires when the p99 of ${METRIC_NAMES.checkDuration} stays above ${lat.threshold.label} for ${lat.for}.`,
      x: 6,
      targets: [{ expr: `max(${checkQuantileExpr(0.99, SVC)})`, legendFormat: "p99" }],
      unit: "s",
      steps: [{ color: "green", value: null }, ...latencySteps().slice(1)],
      noValue: "no checks",
      links: runbookLink(lat),
    }),
    stat({
      id: 3,
      title: "Dedup errors/s now",
      description: `${err.name} fires on any error (rate over ${RATE_WINDOW} > ${err.threshold.value}) for ${err.for}.`,
      x: 12,
      targets: [{ expr: `sum(${errorRateExpr(SVC)})`, legendFormat: "errors/s" }],
      unit: "short",
      steps: [
        { color: "green", value: null },
        { color: "red", value: ERROR_STAT_RED_STEP },
      ],
      noValue: "0",
      links: runbookLink(err),
    }),
    stat({
      id: 4,
      title: "Dedup alerts pending / firing",
      description: "Prometheus's ALERTS series for the three dedup alerts (rules: infra/prometheus/rules/dedup.yml).",
      x: 18,
      targets: [
        {
          expr: `count by (alertname, alertstate) (ALERTS{alertname=~"${alertNames}", ${SVC}})`,
          legendFormat: "{{alertname}} {{alertstate}}",
        },
      ],
      unit: "none",
      steps: [
        { color: "green", value: null },
        { color: "orange", value: 1 },
      ],
      noValue: "none",
    }),
    timeseries({
      id: 5,
      title: "Duplicate ratio",
      description: `deduplicated / processed over ${RATE_WINDOW}, per handler. Lines: ${dup.normal.label} (yellow) and ${dup.threshold.label} (red, ${dup.name} after ${dup.for}). The axis always reaches the alert line.`,
      gridPos: { x: 0, y: 4, w: 12, h: 9 },
      targets: [{ expr: duplicateRatioExpr(SVC_HANDLER), legendFormat: "{{service}}/{{handler}} ({{topic}})" }],
      unit: "percentunit",
      steps: ratioSteps(),
      softMax: dup.threshold.value * SOFT_MAX_FACTOR,
      links: runbookLink(dup),
    }),
    timeseries({
      id: 6,
      title: "Redis check latency (p99, p50)",
      description: `Quantiles of ${METRIC_NAMES.checkDuration} over ${RATE_WINDOW}, per service (the histogram has no handler label). Red line: ${lat.threshold.label} (${lat.name} after ${lat.for}).`,
      gridPos: { x: 12, y: 4, w: 12, h: 9 },
      targets: [
        { expr: checkQuantileExpr(0.99, SVC), legendFormat: "p99 {{service}}" },
        { expr: checkQuantileExpr(0.5, SVC), legendFormat: "p50 {{service}}" },
      ],
      unit: "s",
      steps: latencySteps(),
      softMax: lat.threshold.value * SOFT_MAX_FACTOR,
      links: runbookLink(lat),
    }),
    timeseries({
      id: 7,
      title: "Dedup errors by reason",
      description: `Rate of ${METRIC_NAMES.errors} over ${RATE_WINDOW}, stacked by reason (${ERROR_REASONS.join(", ")}). Any error is ${err.name}.`,
      gridPos: { x: 0, y: 13, w: 12, h: 9 },
      targets: [{ expr: errorRateExpr(SVC, ["reason"]), legendFormat: "{{reason}}" }],
      unit: "short",
      stacked: true,
      overrides: colorOverrides(ERROR_REASONS),
      links: runbookLink(err),
    }),
    timeseries({
      id: 8,
      title: "Processed rate by result",
      description: `Rate of ${METRIC_NAMES.processed} over ${RATE_WINDOW} (messages/s), stacked by result (${PROCESSED_RESULTS.join(", ")}).`,
      gridPos: { x: 12, y: 13, w: 12, h: 9 },
      targets: [
        {
          expr: `sum by (result) (rate(${METRIC_NAMES.processed}{${SVC_HANDLER}}[${RATE_WINDOW}]))`,
          legendFormat: "{{result}}",
        },
      ],
      unit: "ops",
      stacked: true,
      overrides: colorOverrides(PROCESSED_RESULTS),
    }),
  ];
}

function queryVariable(name: string, label: string, query: string) {
  return {
    name,
    label,
    type: "query",
    datasource: DS,
    definition: query,
    // The plain-string form: every Grafana version since 7 runs it, 10+ migrates it to its editor.
    query,
    includeAll: true,
    allValue: ".*",
    multi: true,
    current: {},
    options: [],
    refresh: 2,
    regex: "",
    sort: 1,
    hide: 0,
    skipUrlSync: false,
  };
}

/** The whole dashboard object (import JSON). */
export function dashboard() {
  return {
    __inputs: [
      {
        name: "DS_PROMETHEUS",
        label: "Prometheus",
        description: "The Prometheus that scrapes the services' dedup metrics",
        type: "datasource",
        pluginId: "prometheus",
        pluginName: "Prometheus",
      },
    ],
    __elements: {},
    __requires: [
      { type: "grafana", id: "grafana", name: "Grafana", version: "10.0.0" },
      { type: "datasource", id: "prometheus", name: "Prometheus", version: "1.0.0" },
      { type: "panel", id: "stat", name: "Stat", version: "" },
      { type: "panel", id: "timeseries", name: "Time series", version: "" },
    ],
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: "grafana", uid: "-- Grafana --" },
          enable: true,
          hide: true,
          iconColor: "rgba(0, 211, 255, 1)",
          name: "Annotations & Alerts",
          type: "dashboard",
        },
      ],
    },
    description: "Health of the Kafka consumer deduplication (spec §7 metrics, §8 thresholds). Generated by `npm run gen:infra`.",
    editable: true,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    id: null,
    links: [],
    liveNow: false,
    panels: panels(),
    refresh: "10s",
    schemaVersion: 38,
    tags: ["dedup", "kafka", "redis"],
    templating: {
      list: [
        queryVariable("service", "Service", `label_values(${METRIC_NAMES.processed}, service)`),
        queryVariable("handler", "Handler", `label_values(${METRIC_NAMES.processed}{${SVC}}, handler)`),
      ],
    },
    time: { from: "now-1h", to: "now" },
    timepicker: { refresh_intervals: ["5s", "10s", "30s", "1m", "5m", "15m"] },
    timezone: "",
    title: "Dedup health",
    uid: DASHBOARD_UID,
    version: 1,
    weekStart: "",
  };
}

/** The dashboard as the JSON text committed to `infra/grafana/dedup-health.json`. */
export function renderDashboard(): string {
  return `${JSON.stringify(dashboard(), null, 2)}\n`;
}
