import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { describe, expect, it } from "vitest";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { TTL_POLICY } from "@/names/keys";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { ALERT_LIST, ALERTS, chartLines, errorReasonClass, THRESHOLDS } from "./thresholds";
import { checkQuantileExpr, duplicateRatioExpr, RATE_WINDOW, RATE_WINDOW_MS } from "./alert-exprs";
import { alertTextsFor } from "./alert-model";
import { DEDUP_ERROR_REASONS, METRIC_NAMES } from "@/names/dedup";

/** Prometheus duration (`10m`, `1m30s`, `0s`) in ms. */
function durationMs(d: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  const rest = d.replace(/(\d+)(ms|s|m|h|d)/g, (_, n: string, u: string) => {
    total += Number(n) * (units[u] ?? NaN);
    return "";
  });
  if (rest !== "") throw new Error(`bad duration ${d}`);
  return total;
}

describe("thresholds of spec §8", () => {
  it("carries the documented numbers, names and severity", () => {
    expect(ALERTS.duplicateRate).toMatchObject({ name: "DedupDuplicateRateHigh", for: "10m", severity: "ticket" });
    expect(ALERTS.duplicateRate.threshold.value).toBe(0.1);
    expect(ALERTS.duplicateRate.normal.value).toBe(0.01);
    expect(ALERTS.redisErrors).toMatchObject({ name: "DedupRedisErrors", severity: "ticket" });
    expect(ALERTS.redisErrors.threshold.value).toBe(0);
    expect(ALERTS.redisLatency).toMatchObject({ name: "DedupRedisLatencyHigh", severity: "ticket" });
    expect(ALERTS.redisLatency.threshold.value).toBe(0.05);
    expect(THRESHOLDS).toEqual({
      duplicateRatio: 0.1,
      duplicateRatioNormal: 0.01,
      errorRate: 0,
      checkP99Seconds: 0.05,
    });
  });

  it("uses the valid histogram form of the latency alert, verbatim from the spec", () => {
    expect(ALERTS.redisLatency.expr).toBe(
      "histogram_quantile(0.99, sum by (le, service) (rate(deduplication_check_duration_seconds_bucket[5m]))) > 0.05",
    );
  });

  it("groups each alert by the labels of spec §7", () => {
    expect(ALERTS.duplicateRate.by).toEqual(["service", "topic", "handler"]);
    expect(ALERTS.redisErrors.by).toEqual(["service", "reason"]);
    expect(ALERTS.redisLatency.by).toEqual(["service"]);
    for (const a of ALERT_LIST) {
      for (const label of a.by) expect(a.valueExpr).toContain(label);
      expect(a.expr).toBe(`${a.valueExpr} > ${a.threshold.value}`);
    }
  });

  it("keeps forMs equal to the Prometheus `for`, and the rate window at 5 min", () => {
    for (const a of ALERT_LIST) expect(a.forMs).toBe(durationMs(a.for));
    expect(RATE_WINDOW_MS).toBe(durationMs(RATE_WINDOW));
    expect(RATE_WINDOW).toBe("5m");
  });

  it("alerts only on metric names the library and the app export (spec §7's four among them)", () => {
    expect(Object.values(METRIC_NAMES)).toEqual(
      expect.arrayContaining([
        "deduplication_check_duration_seconds",
        "deduplication_errors_total",
        "messages_deduplicated_total",
        "messages_processed_total",
      ]),
    );
    // …and the consumer-group gauges the app exports about Kafka (names/kafka.ts).
    // …and, for the deadman rules, the self-description, the histogram's count and Prometheus' own `up`.
    const deadman = [HANDLER_INFO_METRIC, `${METRIC_NAMES.checkDuration}_count`, "up"];
    const known = new Set<string>([
      ...Object.values(METRIC_NAMES),
      `${METRIC_NAMES.checkDuration}_bucket`,
      ...deadman,
      ...Object.values(KAFKA_METRIC_NAMES),
      ...Object.values(OBSERVE_METRIC_NAMES),
    ]);
    for (const a of ALERT_LIST) {
      const metrics = a.valueExpr.match(/[a-z_]+(?=[{[])/g) ?? [];
      expect(metrics.length).toBeGreaterThan(0);
      for (const m of metrics) expect(known).toContain(m);
    }
  });

  it("gives every alert a distinct runbook anchor equal to its lower-cased name, on the app's own runbook page", () => {
    const anchors = ALERT_LIST.map((a) => a.runbookAnchor);
    expect(new Set(anchors).size).toBe(ALERT_LIST.length);
    for (const a of ALERT_LIST) {
      expect(a.runbookAnchor).toBe(a.name.toLowerCase());
      expect(a.runbookUrl).toBe(`/runbook#${a.runbookAnchor}`);
    }
  });

  it("labels each line for charts, with the normal level below the alert level", () => {
    expect(ALERTS.duplicateRate.threshold.label).toBe("10% alert");
    expect(ALERTS.duplicateRate.normal.label).toBe("< 1% normal");
    expect(ALERTS.redisLatency.threshold.label).toBe("50 ms");
    expect(ALERTS.duplicateRate.normal.value).toBeLessThan(ALERTS.duplicateRate.threshold.value);
  });

  it("builds filtered queries for dashboards", () => {
    expect(duplicateRatioExpr('service=~"$service"', ["handler"])).toBe(
      'sum by (handler) (rate(messages_deduplicated_total{service=~"$service"}[5m]))' +
        ' / sum by (handler) (rate(messages_processed_total{service=~"$service"}[5m]))',
    );
    expect(checkQuantileExpr(0.5, 'service="a"')).toBe(
      'histogram_quantile(0.5, sum by (le, service) (rate(deduplication_check_duration_seconds_bucket{service="a"}[5m])))',
    );
  });

  it("the TTL policy is spec §3's", () => {
    expect(TTL_POLICY.defaultMs).toBe(24 * 3_600_000);
    expect(TTL_POLICY.criticalMs).toBe(7 * 24 * 3_600_000);
    expect(TTL_POLICY.minimumMs).toBe(10 * 60_000);
  });
});

describe("chartLines", () => {
  it("gives the duplicate ratio its 10% alert and 1% normal lines", () => {
    expect(chartLines("duplicateRate")).toEqual([
      { value: 0.1, label: "10% alert", kind: "alert" },
      { value: 0.01, label: "< 1% normal", kind: "normal" },
    ]);
  });

  it("gives the latency its 50 ms line and the error rate none (0 lies on the axis)", () => {
    expect(chartLines("redisLatency")).toEqual([{ value: 0.05, label: "50 ms", kind: "alert" }]);
    expect(chartLines("redisErrors")).toEqual([]);
  });
});

describe("error reason texts", () => {
  it("classes marshal apart from the Redis reasons", () => {
    expect(DEDUP_ERROR_REASONS.map(errorReasonClass)).toEqual(["redis", "redis", "marshal"]);
  });

  it("names the publisher and the DLQ for marshal, Redis and both failure modes for the others", () => {
    const marshal = alertTextsFor(ALERTS.redisErrors, { service: "s", reason: "marshal" });
    const redis = alertTextsFor(ALERTS.redisErrors, { service: "s", reason: "redis_conn" });
    expect(marshal.summary).toMatch(/publisher/);
    expect(marshal.description).toMatch(/_watermill_message_uuid.+dead-letter/s);
    expect(marshal.description).not.toMatch(/unchecked|fail-open/i);
    expect(redis.description).toMatch(/Redis.+Fail-open.+unchecked.+fail-closed.+DLQ/s);
  });
});
