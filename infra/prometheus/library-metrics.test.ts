import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  DEDUP_ERROR_REASONS,
  DEDUP_ERROR_REASONS as ERROR_REASONS,
  METRIC_NAMES as LIBRARY_NAMES,
  METRIC_LABELS,
  METRIC_NAMES,
  PROCESSED_RESULTS,
} from "@/names/dedup";
import { CHECK_DURATION_BUCKETS, dedupRecorder } from "@/server/dedup";
import { ALERTS } from "@/lib/thresholds";

/**
 * The rules and the dashboard are generated from lib/thresholds; this checks that the library
 * really exposes what lib/thresholds says, so the alerts are not silently watching nothing.
 */
describe("lib/thresholds matches what the dedup library exposes", () => {
  it("has the four metric names of spec §7", () => {
    expect(LIBRARY_NAMES).toMatchObject({
      deduplicated: "messages_deduplicated_total",
      processed: "messages_processed_total",
      checkDuration: "deduplication_check_duration_seconds",
      errors: "deduplication_errors_total",
    });
  });

  it("exposes the labels the alert expressions group by", async () => {
    const registry = new Registry();
    const rec = dedupRecorder(registry, "svc");
    for (const r of PROCESSED_RESULTS) rec.result("topic", "handler", r);
    rec.check("handler", performance.now(), 0.01);
    rec.error("redis_timeout", "handler");
    const exposed = await registry.getMetricsAsJSON();
    const labelsOf = (name: string) => {
      const m = exposed.find((x) => x.name === name);
      const v = m?.values.find((x) => !("le" in x.labels));
      return Object.keys(v?.labels ?? {}).sort();
    };
    for (const key of ["deduplicated", "processed", "checkDuration", "errors"] as const) {
      expect(labelsOf(METRIC_NAMES[key]), key).toEqual([...METRIC_LABELS[key]].sort());
    }
  });

  it("knows the same error reasons", () => {
    expect([...DEDUP_ERROR_REASONS].sort()).toEqual([...ERROR_REASONS].sort());
  });

  it("has a histogram bucket boundary exactly at the latency threshold (else the p99 test is interpolated)", () => {
    expect(CHECK_DURATION_BUCKETS).toContain(ALERTS.redisLatency.threshold.value);
  });
});
