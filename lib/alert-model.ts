/**
 * What an alert is: one entry with everything its consumers read (the rule generator, the promtool
 * coverage test, the Grafana dashboard, the embedded evaluator, the alerts page). Isomorphic: no
 * Node imports. The entries themselves are in `lib/thresholds.ts` (`ALERTS`, `ALERT_LIST`).
 */
import { NAMED_QUERIES, type NamedQuery, type QueryName } from "@/lib/named-queries";

/** Units an alert's value can be in: `ratio` (0..1), `per_second` (events/s), `seconds`, `count` (a number of things). */
export const ALERT_UNITS = ["ratio", "per_second", "seconds", "count"] as const;

/** One of {@link ALERT_UNITS}. */
export type AlertUnit = (typeof ALERT_UNITS)[number];

/** A value a chart draws as a horizontal line, with the text shown next to it. */
export interface ThresholdLine {
  /** In the alert's {@link AlertThreshold.unit} (ratio 0..1, errors per second, seconds). */
  readonly value: number;
  /** Short human label for a chart legend or tooltip, e.g. "10% alert". */
  readonly label: string;
}

/**
 * An alert's `summary` and `description` annotations in Prometheus template notation
 * (`{{ $labels.x }}`, `{{ $value | humanizePercentage }}`). The embedded evaluator fills in
 * `$labels` and `$value` itself ({@link renderAlertText}).
 */
export interface AlertTexts {
  readonly summary: string;
  readonly description: string;
}

/**
 * Other texts for the instances whose `label` equals `equals` (e.g. `reason="marshal"`: a publisher
 * bug, not a Redis incident). The rule file selects them with `{{ if eq $labels.<label> "<equals>" }}`.
 */
export interface AlertTextVariant {
  readonly label: string;
  readonly equals: string;
  readonly texts: AlertTexts;
}

/** Everything one alert needs: the rule file, the dashboard, the embedded evaluator and the pages. */
export interface AlertThreshold {
  /** Alert name (`alertname` label), CamelCase with the `Dedup` prefix. */
  readonly name: string;
  /** One-line meaning, for a UI tooltip and the alert list. */
  readonly title: string;
  /** The named query of the value: the embedded evaluator evaluates it, the pages chart it. */
  readonly query: QueryName;
  /** The alert fires when the value is strictly above this. */
  readonly threshold: ThresholdLine;
  /** The level seen on a healthy system, when the spec documents one; `null` otherwise. */
  readonly normal: ThresholdLine | null;
  /** What the value measures (one of {@link ALERT_UNITS}). */
  readonly unit: AlertUnit;
  /** Labels the alert is evaluated per (one alert instance per combination). */
  readonly by: readonly string[];
  /** How long the condition must hold before the alert fires, Prometheus notation (`0m` = at once). */
  readonly for: `${number}m`;
  /** {@link AlertThreshold.for} in milliseconds. */
  readonly forMs: number;
  /** Value of the `severity` label. */
  readonly severity: "ticket" | "page";
  /** PromQL of the value alone (no comparison): the PromQL of its named query {@link AlertThreshold.query}. */
  readonly valueExpr: string;
  /** PromQL of the alert: `valueExpr > threshold`. */
  readonly expr: string;
  /** Annotation texts of every instance (unless a {@link AlertThreshold.variants} entry matches). */
  readonly texts: AlertTexts;
  /** Texts for instances told apart by one label value. */
  readonly variants: readonly AlertTextVariant[];
  /**
   * The dashboard page of an instance, as a path template (`/handlers/{{ $labels.service }}/…`):
   * the alert links to it and the rule's `dashboard_url` is built from it.
   */
  readonly dashboardPath: string;
  /** Anchor of the alert's section in RUNBOOK.md (GitHub heading slug: the name in lower case). */
  readonly runbookAnchor: string;
  /**
   * That section on the app's own runbook page (`/runbook#<anchor>`, relative). Where a deployment
   * publishes it elsewhere (`RUNBOOK_BASE_URL`), the server and the rule generator build the link
   * with {@link runbookUrl} instead.
   */
  readonly runbookUrl: string;
}

/** The app's page of the RUNBOOK.md it ships: the runbook base when `RUNBOOK_BASE_URL` is not set. */
export const RUNBOOK_PATH = "/runbook";

/**
 * The link to a runbook section: `base` (an absolute URL, or a path of this app such as
 * {@link RUNBOOK_PATH}) with `#<anchor>`; a fragment already in `base` is replaced.
 */
export function runbookUrl(anchor: string, base: string = RUNBOOK_PATH): string {
  return `${base.replace(/#.*$/, "")}#${anchor}`;
}

/** The fields {@link defineAlert} derives from the others. */
type Derived = "valueExpr" | "expr" | "runbookAnchor" | "runbookUrl" | "forMs" | "variants";

/** The fields an alert entry writes. */
export type AlertSpec = Omit<AlertThreshold, Derived> & { readonly variants?: readonly AlertTextVariant[] };

/**
 * Builds an alert entry: its value's PromQL (its named query's, from `queries`: the one list, or a
 * copy with a planted entry in a test), the comparison, the `for` in ms, the runbook anchor and URL.
 */
export function defineAlert<const A extends AlertSpec>(
  a: A,
  queries: readonly NamedQuery[] = NAMED_QUERIES,
): A & Pick<AlertThreshold, Derived> {
  const anchor = a.name.toLowerCase();
  const minutes = Number(a.for.slice(0, -1));
  const valueExpr = queries.find((q) => q.name === a.query)?.promql;
  if (!/^Dedup[A-Z]\w*$/.test(a.name)) throw new RangeError(`alert name: expected Dedup<CamelCase>, got ${a.name}`);
  if (!(Number.isFinite(minutes) && minutes >= 0))
    throw new RangeError(`${a.name}.for: expected <minutes>m, got ${a.for}`);
  if (valueExpr === undefined)
    throw new RangeError(
      `${a.name}.query: ${a.query} is not a named query (add it to NAMED_QUERIES, lib/named-queries.ts)`,
    );
  return {
    ...a,
    variants: a.variants ?? [],
    forMs: minutes * 60_000,
    valueExpr,
    expr: `${valueExpr} > ${a.threshold.value}`,
    runbookAnchor: anchor,
    runbookUrl: runbookUrl(anchor),
  };
}

/** The texts of the instance with these labels: the first matching variant's, else the alert's own. */
export function alertTextsFor(a: AlertThreshold, labels: Readonly<Record<string, string>>): AlertTexts {
  return a.variants.find((v) => labels[v.label] === v.equals)?.texts ?? a.texts;
}

/**
 * The rule file's annotation templates: the alert's texts, wrapped in `{{ if eq … }}` per variant
 * so that Prometheus picks the instance's text.
 */
export function ruleTexts(a: AlertThreshold): AlertTexts {
  const pick = (key: keyof AlertTexts) =>
    a.variants.reduceRight(
      (otherwise, v) => `{{ if eq $labels.${v.label} "${v.equals}" }}${v.texts[key]}{{ else }}${otherwise}{{ end }}`,
      a.texts[key],
    );
  return { summary: pick("summary"), description: pick("description") };
}

/**
 * Fills a text template for the embedded evaluator: `{{ $labels.x }}` becomes the label's value and
 * `{{ $value … }}` the value in the alert's unit (Prometheus' humanizers are not reproduced exactly).
 */
export function renderAlertText(
  template: string,
  a: AlertThreshold,
  labels: Readonly<Record<string, string>>,
  value: number | null,
): string {
  return template
    .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_m, k: string) => labels[k] ?? "")
    .replace(/\{\{ \$value[^}]*\}\}/g, () => formatAlertValue(a, value));
}

function formatAlertValue(a: AlertThreshold, v: number | null): string {
  if (v === null || !Number.isFinite(v)) return "?";
  switch (a.unit) {
    case "ratio":
      return `${Math.round(v * 1000) / 10}%`;
    case "seconds":
      return v < 1 ? `${Math.round(v * 1000)}ms` : `${Math.round(v * 100) / 100}s`;
    case "per_second":
    case "count":
      return String(Number(v.toPrecision(3)));
  }
}

/**
 * An alert on any occurrence of something that should never happen: above 0, at once (`for: 0m`),
 * normal 0 — the alert entry writes only what it means and the threshold line's label.
 */
export function anyOccurrenceAlert<const A extends Omit<AlertSpec, "threshold" | "normal" | "for">>(
  a: A,
  thresholdLabel: string,
) {
  return defineAlert({
    ...a,
    threshold: { value: 0, label: thresholdLabel },
    normal: { value: 0, label: "0 normal" },
    for: "0m",
  });
}
