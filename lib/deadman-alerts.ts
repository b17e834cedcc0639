/**
 * The alerts that watch the watchers: a consumer service that stopped exporting, the dashboard's
 * own scrape target down, and the scrape-time gauges (computed by the dashboard's leader) missing.
 * Without them, a dead dashboard or consumer silences every other rule: each reads series that are
 * then simply absent. Entries of `ALERTS` (`lib/thresholds.ts`), written here by family so that file
 * keeps its size; isomorphic, no Node imports.
 *
 * Their values are ages (seconds since last seen) or a share of targets down, so the threshold says
 * how long a gap is tolerated: a consumer's restart or a leader's failover is shorter.
 */
import { DASHBOARD_SCRAPE_JOB, DEADMAN_MEMORY } from "@/lib/alert-exprs";
import { defineAlert } from "@/lib/alert-model";
import { METRIC_NAMES } from "@/names/dedup";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";

/** How long a consumer service may be silent (seconds): longer than a restart or a rolling deploy. */
export const CONSUMER_SILENT_SECONDS = 300;
/** How long the scrape-time gauges may be missing (seconds): longer than a leader's failover (30 s) and a few scrapes. */
export const FLEET_GAUGES_MISSING_SECONDS = 180;

/** The deadman alerts, keyed as in `ALERTS`. */
export const DEADMAN_ALERTS = {
  consumerSilent: defineAlert({
    name: "DedupConsumerSilent",
    title: `A consumer service seen in the last ${DEADMAN_MEMORY} exports no dedup metrics any more (its self-description nor its checks)`,
    query: "consumer_gone_age",
    threshold: { value: CONSUMER_SILENT_SECONDS, label: "silent 5 min" },
    normal: null,
    unit: "seconds",
    by: ["service"],
    for: "0m",
    severity: "ticket",
    texts: {
      summary: "{{ $labels.service }} stopped exporting its dedup metrics: its dedup alerts cannot fire",
      description:
        `Service {{ $labels.service }} has exported no dedup metrics (${HANDLER_INFO_METRIC}, ${METRIC_NAMES.checkDuration}) ` +
        `for {{ $value | humanizeDuration }}, though it did in the last ${DEADMAN_MEMORY}. Every replica is down, ` +
        "no longer scraped (target gone from Prometheus' configuration or service discovery), or its metrics endpoint fails: " +
        "none of its dedup alerts can fire while it is silent. Check its processes and Prometheus' targets page.",
    },
    dashboardPath: "/?service={{ $labels.service }}",
  }),
  dashboardDown: defineAlert({
    name: "DedupDashboardDown",
    title: "Share of the dashboard's scrape targets down (no target at all counts as all down)",
    query: "dashboard_down",
    threshold: { value: 0.5, label: "over half down" },
    normal: { value: 0, label: "0 normal" },
    unit: "ratio",
    by: ["job"],
    // A restart of the app takes seconds; two minutes of failed scrapes are not one.
    for: "2m",
    severity: "page",
    texts: {
      summary: `The dedup-health dashboard is down ({{ $value | humanizePercentage }} of its targets): DedupMemoryLost and the DLQ alerts cannot fire`,
      description:
        `{{ $value | humanizePercentage }} of Prometheus' scrape targets of job ${DASHBOARD_SCRAPE_JOB} (the dashboard) failed ` +
        "their scrapes for 2 minutes, or the job has no target at all. The dashboard computes the inputs of DedupMemoryLost " +
        `(${OBSERVE_METRIC_NAMES.memoryLost}) and DedupDlqBacklogStale at scrape time: while it is down those alerts cannot fire ` +
        "and the consumer-lag figures it exports stop. Check the app's process (GET /healthz, GET /readyz) and its logs.",
    },
    dashboardPath: "/",
  }),
  fleetGaugesMissing: defineAlert({
    name: "DedupFleetGaugesMissing",
    title:
      "Seconds the dashboard's scrape-time gauges (memory lost, oldest open DLQ record) have been missing while the dashboard is up",
    query: "fleet_gauges_gone_age",
    threshold: { value: FLEET_GAUGES_MISSING_SECONDS, label: "missing 3 min" },
    normal: null,
    unit: "seconds",
    by: ["job"],
    for: "0m",
    severity: "page",
    texts: {
      summary: "The dashboard is up but exports no scrape-time gauges: DedupMemoryLost and the DLQ alerts cannot fire",
      description:
        `No target of job {{ $labels.job }} has exported ${OBSERVE_METRIC_NAMES.memoryLost} or ${OBSERVE_METRIC_NAMES.dlqOldestOpenAge} ` +
        "for {{ $value | humanizeDuration }}, though the dashboard answers its scrapes: the replica that computes them (the " +
        "leader, or each replica alone once PostgreSQL is out of reach for 15 s) cannot read Redis and Kafka, or no replica " +
        "leads (a failover takes seconds). Check GET /readyz on each replica (its role and reasons) and the app's log.",
    },
    dashboardPath: "/",
  }),
} as const;
