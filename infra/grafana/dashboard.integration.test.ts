/**
 * What a Grafana import would show, checked against the real Prometheus (no Grafana runs here:
 * Debian and the npm registry ship no Grafana server). Every panel query and every annotation of
 * the committed dashboard, with `$service` / `$handler` interpolated as Grafana does (one value, and
 * "All" = `.*`), is valid PromQL to Prometheus 2.42; the variables' `label_values` selectors are
 * too; and with a service's metrics scraped, the charts of its figures — the alerts' (the lag growth
 * one selecting its consumer group by `<service>.<handler>`) and the app's — return that service's
 * series. Needs /usr/bin/prometheus.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERTS, LAG_GROWTH_FLOOR } from "@/lib/thresholds";
import { dedupRecorder } from "@/server/dedup";
import { LagMetrics } from "@/server/observe/lag-metrics";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { handlerGroupId } from "@/names/kafka";

interface Dash {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  annotations: { list: Array<{ name: string; expr?: string }> };
  templating: { list: Array<{ name: string; query: string }> };
}
const d = JSON.parse(readFileSync(fileURLToPath(new URL("./dedup-health.json", import.meta.url)), "utf8")) as Dash;

const service = `graf${randomBytes(3).toString("hex")}`;
const handler = "on-review-created";
let server: Server;
let prom: OwnPrometheus;
let timer: ReturnType<typeof setInterval>;

/** Grafana's interpolation of the regex variables: a single value escaped, or "All" as `.*`. */
function interpolate(expr: string, one: boolean): string {
  const esc = (v: string) => v.replace(/[\\^$.|?*+()[\]{}]/g, "\\\\$&");
  return expr.replaceAll("$service", one ? esc(service) : ".*").replaceAll("$handler", one ? esc(handler) : ".*");
}

async function query(expr: string): Promise<{ status: string; error?: string; data?: { result: unknown[] } }> {
  return (await (await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { status: string; error?: string; data?: { result: unknown[] } };
}

beforeAll(async () => {
  const registry = new Registry();
  const rec = dedupRecorder(registry, service);
  new LagMetrics(registry, () => ["t"], async () => ({
    offsets: [{ partition: 0, low: 0, high: 1000 }],
    groups: [{ groupId: handlerGroupId(service, handler), state: "Empty", protocol: "", members: [], committed: new Map([[0, 1000 - 3 * LAG_GROWTH_FLOOR]]) }],
  }));
  // Traffic every 200 ms: successes, a few duplicates, checks of 2 ms.
  let n = 0;
  timer = setInterval(() => {
    for (let i = 0; i < 10; i++) {
      rec.result("t", handler, n++ % 5 === 0 ? "deduplicated" : "success");
      rec.checkSeconds(0.002);
    }
  }, 200);
  server = createServer((_req, res) => void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text)));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  prom = await startOwnPrometheus({ targets: [`127.0.0.1:${(server.address() as AddressInfo).port}`], ruleFiles: [], intervalSec: 1 });
  // Rates and the lag's slope need a few samples.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && ((await query(`count(count_over_time(kafka_consumergroup_lag_sum[1m]) >= 4)`)).data?.result.length ?? 0) === 0) await new Promise((r) => setTimeout(r, 500));
}, 60_000);

afterAll(async () => {
  clearInterval(timer);
  await prom?.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

describe("the Grafana dashboard's queries in the real Prometheus", () => {
  it("every panel query and annotation is valid PromQL for one service and handler and for All; the variables' selectors too", async () => {
    const exprs = [...d.panels.flatMap((p) => p.targets.map((t) => t.expr)), ...d.annotations.list.flatMap((a) => (a.expr ? [a.expr] : []))];
    expect(exprs.length).toBeGreaterThan(20);
    for (const e of exprs)
      for (const one of [true, false]) {
        const r = await query(interpolate(e, one));
        expect(r.status, `${interpolate(e, one)}: ${r.error ?? ""}`).toBe("success");
      }
    for (const v of d.templating.list) {
      const m = /^label_values\((.+), \w+\)$/.exec(v.query);
      expect(m, v.query).not.toBeNull();
      expect((await query(interpolate(m![1]!, true))).status).toBe("success");
    }
  });

  it("the charts of the service's figures show its series: the duplicate ratio, the check p99, the lag growth by consumer group, processed and lag", async () => {
    const panel = (title: string) => d.panels.find((p) => p.title === title)!;
    for (const title of [ALERTS.duplicateRate.title, ALERTS.redisLatency.title, ALERTS.consumerLagGrowing.title, "Processed rate by result", "Consumer lag"]) {
      expect(panel(title), title).toBeDefined();
      const r = await query(interpolate(panel(title).targets[0]!.expr, true));
      expect(r.data?.result.length, `${title}: ${panel(title).targets[0]!.expr}`).toBeGreaterThan(0);
    }
    // The lag growth chart selects the group by id: another service's value selects nothing.
    const other = panel(ALERTS.consumerLagGrowing.title).targets[0]!.expr.replaceAll("$service", "nosuch").replaceAll("$handler", handler);
    expect((await query(other)).data?.result).toEqual([]);
  });
});
