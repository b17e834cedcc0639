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
import { ALERTS } from "@/lib/thresholds";
import { LAG_GROWTH_FLOOR } from "@/lib/alert-exprs";
import { dedupRecorder } from "@/server/dedup";
import { LagMetrics } from "@/server/observe/watchers/lag-metrics";
import { promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { handlerGroupId, KAFKA_METRIC_NAMES } from "@/names/kafka";

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

const query = (expr: string) => promQuery(prom.url, expr);

beforeAll(async () => {
  const registry = new Registry();
  const rec = dedupRecorder(registry, service);
  new LagMetrics(
    registry,
    () => ["t"],
    async () => ({
      offsets: [{ partition: 0, low: 0, high: 1000 }],
      groups: [
        {
          groupId: handlerGroupId(service, handler),
          state: "Empty",
          protocol: "",
          members: [],
          committed: new Map([[0, 1000 - 3 * LAG_GROWTH_FLOOR]]),
        },
      ],
    }),
  );
  // Traffic every 200 ms: successes, a few duplicates, checks of 2 ms.
  let n = 0;
  timer = setInterval(() => {
    for (let i = 0; i < 10; i++) {
      rec.result("t", handler, n++ % 5 === 0 ? "deduplicated" : "success");
      rec.check(handler, performance.now(), 0.002);
    }
  }, 200);
  server = createServer(
    (_req, res) =>
      void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text)),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${(server.address() as AddressInfo).port}`],
    ruleFiles: [],
    intervalSec: 1,
  });
  // Rates and the lag's slope need a few samples.
  const deadline = Date.now() + 30_000;
  while (
    Date.now() < deadline &&
    (await query(`count(count_over_time(${KAFKA_METRIC_NAMES.lagSum}[1m]) >= 4)`)).length === 0
  )
    await new Promise((r) => setTimeout(r, 500));
}, 60_000);

afterAll(async () => {
  clearInterval(timer);
  await prom?.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

describe("the Grafana dashboard's queries in the real Prometheus", () => {
  it("every panel query and annotation is valid PromQL for one service and handler and for All; the variables' selectors too", async () => {
    const exprs = [
      ...d.panels.flatMap((p) => p.targets.map((t) => t.expr)),
      ...d.annotations.list.flatMap((a) => (a.expr ? [a.expr] : [])),
    ];
    expect(exprs.length).toBeGreaterThan(20);
    for (const e of exprs)
      for (const one of [true, false]) {
        // A query Prometheus refuses rejects with its error text.
        await expect(query(interpolate(e, one)), interpolate(e, one)).resolves.toBeInstanceOf(Array);
      }
    for (const v of d.templating.list) {
      const m = /^label_values\((.+), \w+\)$/.exec(v.query);
      expect(m, v.query).not.toBeNull();
      await expect(query(interpolate(m![1]!, true)), v.query).resolves.toBeInstanceOf(Array);
    }
  });

  it("the charts of the service's figures show its series: the duplicate ratio, the check p99, the lag growth by consumer group, processed and lag", async () => {
    const panel = (title: string) => d.panels.find((p) => p.title === title)!;
    for (const title of [
      ALERTS.duplicateRate.title,
      ALERTS.redisLatency.title,
      ALERTS.consumerLagGrowing.title,
      "Processed rate by result",
      "Consumer lag",
    ]) {
      expect(panel(title), title).toBeDefined();
      const r = await query(interpolate(panel(title).targets[0]!.expr, true));
      expect(r.length, `${title}: ${panel(title).targets[0]!.expr}`).toBeGreaterThan(0);
    }
    // The lag growth chart selects the group by id: another service's value selects nothing.
    const other = panel(ALERTS.consumerLagGrowing.title)
      .targets[0]!.expr.replaceAll("$service", "nosuch")
      .replaceAll("$handler", handler);
    expect(await query(other)).toEqual([]);
  });
});
