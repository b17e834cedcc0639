import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CHECK_DURATION_BUCKETS } from "../../../names/buckets";
import { dedupMetrics } from "./metrics";
import { dedupRecorder } from "./recorder";
import { METRIC_NAMES, SLOW_CHECK_SECONDS } from "../../../names/dedup";

describe("dedupMetrics", () => {
  it("registers exactly the spec §7 names and labels on the given registry, get-or-create", async () => {
    const registry = new Registry();
    const a = dedupMetrics(registry);
    // A second module instance (Next.js double bundling) uses a fresh cache but the same registry.
    const again = dedupMetrics(registry);
    expect(again.processed).toBe(a.processed);
    a.processed.labels({ service: "s", topic: "t", handler: "h", result: "success" }).inc();
    a.errors.labels({ service: "s", reason: "redis_timeout" }).inc();
    const json = await registry.getMetricsAsJSON();
    const byName = new Map(json.map((m) => [m.name, m]));
    expect(byName.get(METRIC_NAMES.processed)?.type).toBe("counter");
    expect(byName.get(METRIC_NAMES.deduplicated)?.type).toBe("counter");
    expect(byName.get(METRIC_NAMES.checkDuration)?.type).toBe("histogram");
    expect(byName.get(METRIC_NAMES.errors)?.type).toBe("counter");
    const text = await registry.metrics();
    expect(text).toContain('messages_processed_total{service="s",topic="t",handler="h",result="success"} 1');
    expect(text).toContain('deduplication_errors_total{service="s",reason="redis_timeout"} 1');
    for (const b of [0.005, 0.01, 0.025, 0.05, 0.1]) expect(CHECK_DURATION_BUCKETS).toContain(b);
  });

  it("reuses metrics already registered by another copy of the module instead of throwing", () => {
    const registry = new Registry();
    dedupMetrics(registry);
    const other = new Registry();
    for (const name of Object.values(METRIC_NAMES)) other.registerMetric(registry.getSingleMetric(name)!);
    expect(() => dedupMetrics(other)).not.toThrow();
    expect(dedupMetrics(other).processed).toBe(dedupMetrics(registry).processed);
  });

  it("recorder increments show up at scrape (cells flushed by collect), also from a second recorder", async () => {
    const registry = new Registry();
    const a = dedupRecorder(registry, "svc");
    const b = dedupRecorder(registry, "svc"); // e.g. another copy of the module
    a.result("t", "h", "success");
    a.result("t", "h", "deduplicated");
    b.result("t", "h", "deduplicated");
    a.check("h", performance.now(), 0.004);
    b.check("h", performance.now(), 0.07);
    a.check("h", performance.now(), 5);
    const text = await registry.metrics();
    expect(text).toContain('messages_processed_total{service="svc",topic="t",handler="h",result="deduplicated"} 2');
    expect(text).toContain('messages_deduplicated_total{service="svc",topic="t",handler="h"} 2');
    expect(text).toContain("# TYPE deduplication_check_duration_seconds histogram");
    expect(text).toContain('deduplication_check_duration_seconds_bucket{service="svc",le="0.005"} 1');
    expect(text).toContain('deduplication_check_duration_seconds_bucket{service="svc",le="0.1"} 2');
    expect(text).toContain('deduplication_check_duration_seconds_bucket{service="svc",le="+Inf"} 3');
    expect(text).toContain('deduplication_check_duration_seconds_count{service="svc"} 3');
    expect(text).toContain('deduplication_check_duration_seconds_sum{service="svc"} 5.074');
    // A second scrape does not double-count the flushed cells.
    expect(await registry.metrics()).toContain('messages_deduplicated_total{service="svc",topic="t",handler="h"} 2');
  });

  it("a handler's ratio series exists from its first delivery: deduplicated and every result start at 0", async () => {
    const registry = new Registry();
    dedupRecorder(registry, "svc").result("t", "h", "success");
    const text = await registry.metrics();
    expect(text).toContain('messages_deduplicated_total{service="svc",topic="t",handler="h"} 0');
    expect(text).toContain('messages_processed_total{service="svc",topic="t",handler="h",result="success"} 1');
    expect(text).toContain('messages_processed_total{service="svc",topic="t",handler="h",result="error"} 0');
    expect(text).toContain('messages_processed_total{service="svc",topic="t",handler="h",result="deduplicated"} 0');
  });

  it("exports each handler's last check, last error and last slow check as Unix seconds, each from its first event", async () => {
    const registry = new Registry();
    const rec = dedupRecorder(registry, "svc");
    const other = dedupRecorder(registry, "svc"); // another copy of the module: one series per handler
    /** The gauge's value for `handler`, undefined when the series is absent. */
    const at = async (name: string, handler = "h") => {
      const m = new RegExp(`^${name}\\{service="svc",handler="${handler}"\\} (\\S+)$`, "m").exec(
        await registry.metrics(),
      );
      return m ? Number(m[1]) : undefined;
    };
    const ago = (ms: number) => performance.now() - ms;
    expect(await at(METRIC_NAMES.lastCheck)).toBeUndefined();
    rec.check("h", ago(3000), 0.004);
    // At the threshold is not slow; above it is.
    other.check("h", ago(2000), SLOW_CHECK_SECONDS);
    expect(await at(METRIC_NAMES.lastSlowCheck)).toBeUndefined();
    rec.check("h", ago(1000), SLOW_CHECK_SECONDS + 0.001);
    // A check that is no latency sample (it waited for a reconnect) is still a check, never slow.
    other.check("h", ago(500), null);
    rec.error("redis_conn", "h2");
    const now = Date.now() / 1000;
    expect(await at(METRIC_NAMES.lastCheck)).toBeCloseTo(now - 0.5, 1);
    expect(await at(METRIC_NAMES.lastSlowCheck)).toBeCloseTo(now - 1, 1);
    expect(await at(METRIC_NAMES.lastError)).toBeUndefined();
    expect(await at(METRIC_NAMES.lastError, "h2")).toBeCloseTo(now, 1);
    expect(await at(METRIC_NAMES.lastCheck, "h2")).toBeUndefined();
    // Only the samples are observed: 0.004, 0.05 and 0.051 s.
    expect(await registry.metrics()).toContain('deduplication_check_duration_seconds_count{service="svc"} 3');
  });
});
