/**
 * Against a REAL Prometheus (Debian 2.42, started here on a random port, scrape and evaluation
 * every 1 s) scraping a small HTTP server that serves a Registry on which the library's own
 * recorder is driven with 20% duplicates: the dashboard reads the ratio ≈ 0.2, the latency and
 * processed rate, and the duplicate-rate alert goes pending from the project's rule file. 50
 * concurrent overview viewers cost Prometheus what one does. Prometheus down → the metric fields
 * say `unavailable` and the rest still answers.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { overviewResponseSchema } from "@/lib/api/overview";
import { seriesResponseSchema } from "@/lib/api/series";
import { ALERT_LIST } from "@/lib/thresholds";
import { dedupRecorder } from "@/server/dedup";
import { RECOMMENDED_SETUP } from "@/server/dedup";
import { createObserveContext } from "../context";
import { clearDeclaredHandlers, registerHandlers } from "../core/handler-registry";
import { getOverview } from "../routes/overview";
import { getSeries } from "../routes/series";
import { getAlerts } from "../routes/alerts";
import { freePort } from "@/server/testing/net";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { upstreamCalls } from "../core/upstream-counter";
import { PrometheusSource } from "./prometheus";

const RULES = resolve(__dirname, "../../../infra/prometheus/rules/dedup.yml");

let app: Server;
let prom: OwnPrometheus;
let driver: ReturnType<typeof setInterval>;
let tmp: string;

/** Rule file: the project's generated one when present, else one written from lib/thresholds. */
function ruleFile(): string {
  if (existsSync(RULES)) return RULES;
  const lines = ["groups:", "  - name: dedup-health", "    rules:"];
  for (const a of ALERT_LIST)
    lines.push(
      `      - alert: ${a.name}`,
      `        expr: ${JSON.stringify(a.expr)}`,
      `        for: ${a.for}`,
      "        labels:",
      `          severity: ${a.severity}`,
    );
  const f = join(tmp, "dedup.yml");
  writeFileSync(f, `${lines.join("\n")}\n`);
  return f;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "observe-rules-"));
  const registry = new Registry();
  const rec = dedupRecorder(registry, "notification");
  // 50 deliveries per 100 ms: 10 duplicates (20%), checks of ~2 ms.
  driver = setInterval(() => {
    for (let i = 0; i < 50; i++) {
      rec.result("demo.events", "on-review-created", i < 10 ? "deduplicated" : "success");
      rec.check("on-review-created", performance.now(), 0.0015 + (i % 5) * 0.0002);
    }
  }, 100);
  const port = await freePort();
  app = createServer((_req, res) => {
    void registry.metrics().then((body) => {
      res.writeHead(200, { "content-type": registry.contentType });
      res.end(body);
    });
  });
  await new Promise<void>((r) => app.listen(port, "127.0.0.1", r));
  prom = await startOwnPrometheus({ targets: [`127.0.0.1:${port}`], ruleFiles: [ruleFile()], intervalSec: 1 });
}, 60_000);

afterAll(async () => {
  clearInterval(driver);
  await prom?.stop();
  await new Promise((r) => app?.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

describe("PrometheusSource against a real Prometheus", () => {
  it("reads the duplicate ratio ≈ 0.2, the processed rate and the check p99, and the alert goes pending", async () => {
    const src = new PrometheusSource(prom.url, { cacheTtlMs: 0 });
    const ratio = await until(
      "ratio series",
      async () => {
        const [s] = await src.instant("duplicate_ratio");
        return s && s.value !== null ? s : undefined;
      },
      30_000,
    );
    expect(ratio.labels).toEqual({ service: "notification", topic: "demo.events", handler: "on-review-created" });
    expect(ratio.value!).toBeGreaterThan(0.17);
    expect(ratio.value!).toBeLessThan(0.23);

    const processed = await src.instant("processed_rate");
    // Prometheus divides a young series' increase by the whole 5-min window, so the absolute rate
    // reads low for the first minutes; the split by result is exact: 40 successes per 10 duplicates.
    const success = processed.find((s) => s.labels.result === "success")!.value!;
    const dups = processed.find((s) => s.labels.result === "deduplicated")!.value!;
    expect(success).toBeGreaterThan(0);
    expect(success / dups).toBeGreaterThan(3.6);
    expect(success / dups).toBeLessThan(4.4);
    const [p99] = await src.instant("check_p99");
    expect(p99!.value!).toBeGreaterThan(0.001);
    expect(p99!.value!).toBeLessThanOrEqual(0.0025);

    const rule = await until(
      "DedupDuplicateRateHigh pending",
      async () => {
        const r = (await src.alerts()).find((a) => a.alert === "DedupDuplicateRateHigh");
        return r && r.state === "pending" ? r : undefined;
      },
      20_000,
    );
    expect(rule.instances[0]!.labels).toMatchObject({ service: "notification", handler: "on-review-created" });
    expect(rule.instances[0]!.activeAt).not.toBeNull();
    // Pending: fires at the first evaluation (group interval 1 s) at or after activeAt + for (10 min).
    expect(rule.evaluationIntervalMs).toBe(1000);
    expect(Date.parse(rule.instances[0]!.firesAt!) - Date.parse(rule.instances[0]!.activeAt!)).toBe(600_000);
    expect(rule.instances[0]!.firingSince).toBeNull();
    expect(rule.instances[0]!.value!).toBeCloseTo(0.2, 1);
    // Latency stays below 50 ms and there are no errors: those two stay inactive.
    const all = await src.alerts();
    expect(all.find((a) => a.alert === "DedupRedisLatencyHigh")!.state).toBe("inactive");
    expect(all.find((a) => a.alert === "DedupRedisErrors")!.state).toBe("inactive");
  }, 60_000);

  it("serves the series and the overview; 50 concurrent viewers cost one set of upstream queries", async () => {
    const ctx = createObserveContext({ metrics: new PrometheusSource(prom.url), redis: null });
    const series = await until(
      "three points of the ratio series",
      async () => {
        const s = seriesResponseSchema.parse(
          await getSeries(ctx, { metric: "duplicate_ratio", range: "5m", step: 1, handler: "on-review-created" }),
        );
        const n = s.data.status === "ok" ? (s.data.series[0]?.points.filter(([, v]) => v !== null).length ?? 0) : 0;
        return n >= 3 ? s : undefined;
      },
      20_000,
    );
    expect(series.source).toBe("prometheus");
    expect(series.stepSeconds).toBe(1);
    expect(series.thresholds.map((t) => t.kind)).toEqual(["alert", "normal"]);
    if (series.data.status === "ok") {
      const pts = series.data.series[0]!.points.filter(([, v]) => v !== null);
      expect(pts.at(-1)![1]!).toBeCloseTo(0.2, 1);
    }
    const before = upstreamCalls().prometheus;
    const answers = await Promise.all(Array.from({ length: 50 }, () => getOverview(ctx, "1h")));
    const calls = upstreamCalls().prometheus - before;
    // 5 instant queries + the 3 "now" twins of the alert values + the 3 that tell a fault's end
    // (error quiet, slow-check quiet, slow-check rate) + unchecked + the latency parts (the
    // runtime's stall; Redis' time only with Redis) + rules + the scrape-coverage query
    // (consumer_instances) + what each service exports and when it was last scraped
    // (exported_signals, scrape_time) + the fleet's declarations (handler_info), whatever the
    // number of viewers
    expect(calls).toBeLessThanOrEqual(18);
    const o = overviewResponseSchema.parse(answers[0]);
    const h = o.handlers.find((x) => x.handler === "on-review-created")!;
    expect(o.upstream.prometheus.status).toBe("up");
    expect(h.duplicateRatio.status === "ok" && h.duplicateRatio.value).toBeCloseTo(0.2, 1);
    expect(h.checkLatency.status).toBe("ok");
    expect(h.alerts.map((a) => a.alert)).toContain("DedupDuplicateRateHigh");
  }, 30_000);

  it("with Prometheus down the metric fields are unavailable and the rest still answers, fast", async () => {
    const ctx = createObserveContext({
      metrics: new PrometheusSource(`http://127.0.0.1:${await freePort()}`, { timeoutMs: 500 }),
      redis: null,
    });
    const t0 = Date.now();
    const o = overviewResponseSchema.parse(await getOverview(ctx, "1h"));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(o.upstream.prometheus.status).toBe("down");
    expect(o.alerts.status).toBe("unavailable");
    expect(o.thresholds.duplicateRatio).toBe(0.1);
    const a = await getAlerts(ctx);
    expect(a.alerts.status).toBe("unavailable");
    const s = await getSeries(ctx, { metric: "check_latency", range: "1h" });
    expect(s.data.status).toBe("unavailable");
    expect(s.thresholds.map((t) => t.value)).toEqual([0.05]);
  });

  it("Prometheus stopped: every alert field says unknown since when, with the last known state — never inactive", async () => {
    const ctx = createObserveContext({
      metrics: new PrometheusSource(prom.url, { cacheTtlMs: 0, timeoutMs: 500 }),
      redis: null,
      answerTtlMs: 0,
    });
    const before = overviewResponseSchema.parse(await getOverview(ctx, "1h"));
    const h0 = before.handlers.find((x) => x.handler === "on-review-created")!;
    expect(h0.alertsUnknown ?? null).toBeNull();
    expect(h0.alerts.find((a) => a.alert === "DedupDuplicateRateHigh")!.state).toBe("pending");
    const stoppedAt = Date.now();
    await prom.stop();
    // With Prometheus down the handler's row comes from the app's declaration (as the demo's does).
    registerHandlers([{ service: "notification", setup: { ...RECOMMENDED_SETUP, handler: "on-review-created" } }]);
    const o = overviewResponseSchema.parse(await getOverview(ctx, "1h"));
    const h = o.handlers.find((x) => x.handler === "on-review-created")!;
    // The handler's badge: unknown since the failed read, its last known state pending as read before.
    expect(h.alertsUnknown).not.toBeNull();
    expect(Date.parse(h.alertsUnknown!.since!)).toBeGreaterThanOrEqual(stoppedAt - 1000);
    expect(Date.parse(h.alertsUnknown!.lastKnownAt!)).toBeLessThanOrEqual(stoppedAt + 1000);
    expect(h.alerts.find((a) => a.alert === "DedupDuplicateRateHigh")!.state).toBe("pending");
    expect(o.alerts.status).toBe("unavailable");
    if (o.alerts.status === "unavailable") {
      expect(o.alerts.unknown?.since).toBe(h.alertsUnknown!.since);
      expect(o.alerts.lastKnown?.find((r) => r.alert === "DedupDuplicateRateHigh")?.state).toBe("pending");
    }
    const a = await getAlerts(ctx);
    expect(a.alerts.status === "unavailable" && a.alerts.unknown?.since).toBe(h.alertsUnknown!.since);
    clearDeclaredHandlers();
  }, 30_000);
});
