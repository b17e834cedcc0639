/**
 * The charts of what the app shows beside the alerts (processed rate, duplicates by cause, DLQ writes,
 * leases, handler time, consumer lag), as Grafana panels of the generated dashboard.
 */
import type * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import { PROCESSED_RESULTS, METRIC_NAMES as LIBRARY_METRIC_NAMES } from "@/names/dedup";
import { RATE_WINDOW } from "@/lib/alert-exprs";
import { HANDLER_TIME_METRIC } from "@/lib/query-exprs";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { chart, type Grid, SVC_HANDLER } from "./panels";

const CONSUMER_LAG_METRIC = KAFKA_METRIC_NAMES.lag;

const rate = (metric: string, by: string, matchers = SVC_HANDLER) =>
  `sum by (${by}) (rate(${metric}{${matchers}}[${RATE_WINDOW}]))`;
const quantile = (q: number, metric: string, by: string) =>
  `histogram_quantile(${q}, sum by (le, ${by}) (rate(${metric}_bucket{${SVC_HANDLER}}[${RATE_WINDOW}])))`;

/** The charts of what the app shows beside the alerts. */
export function appCharts(grid: Grid): timeseries.PanelBuilder[] {
  const m = LIBRARY_METRIC_NAMES;
  return [
    chart(
      {
        title: "Processed rate by result",
        description: `Rate of ${m.processed} over ${RATE_WINDOW} (messages/s), stacked by result (${PROCESSED_RESULTS.join(", ")}).`,
        targets: [{ expr: rate(m.processed, "result"), legend: "{{result}}" }],
        unit: "ops",
        stacked: true,
      },
      grid,
    ),
    chart(
      {
        title: "Duplicates by cause",
        description: `Rate of ${m.duplicatesByCause} over ${RATE_WINDOW}, stacked by cause: redelivery (the same Kafka position again), republish (a new position), unknown (no position stored).`,
        targets: [{ expr: rate(m.duplicatesByCause, "cause"), legend: "{{cause}}" }],
        unit: "ops",
        stacked: true,
      },
      grid,
    ),
    chart(
      {
        title: "DLQ writes by reason",
        description: `Rate of ${m.poisoned} over ${RATE_WINDOW}: messages sent to the dead-letter topic, stacked by reason_poisoned.`,
        targets: [{ expr: rate(m.poisoned, "reason_poisoned"), legend: "{{reason_poisoned}}" }],
        unit: "ops",
        stacked: true,
      },
      grid,
    ),
    chart(
      {
        title: "Leases",
        description: `Per second over ${RATE_WINDOW}: attempts that met another consumer's lease (${m.inProgress}), keys released after a failed attempt (${m.released}), successes whose lease had already passed to another consumer (${m.leaseLost}: the handler may have run twice).`,
        targets: [
          { expr: rate(m.inProgress, "service, handler"), legend: "met in progress {{service}}/{{handler}}" },
          { expr: rate(m.released, "service, handler"), legend: "released {{service}}/{{handler}}" },
          { expr: rate(m.leaseLost, "service, handler"), legend: "lease lost {{service}}/{{handler}}" },
        ],
        unit: "ops",
      },
      grid,
    ),
    chart(
      {
        title: "Handler time (p99, p50)",
        description: `Quantiles of ${HANDLER_TIME_METRIC} over ${RATE_WINDOW}: one attempt of the handler itself, the time a processing lease must outlive.`,
        targets: [
          { expr: quantile(0.99, HANDLER_TIME_METRIC, "service, handler"), legend: "p99 {{service}}/{{handler}}" },
          { expr: quantile(0.5, HANDLER_TIME_METRIC, "service, handler"), legend: "p50 {{service}}/{{handler}}" },
        ],
        unit: "s",
      },
      grid,
    ),
    chart(
      {
        title: "Consumer lag",
        description: `${CONSUMER_LAG_METRIC} (kafka-exporter's name) summed per consumer group and topic: messages not yet consumed. Not filtered by the variables: a consumer group carries no service label.`,
        targets: [
          { expr: `sum by (consumergroup, topic) (${CONSUMER_LAG_METRIC})`, legend: "{{consumergroup}} {{topic}}" },
        ],
        unit: "short",
      },
      grid,
    ),
  ];
}
