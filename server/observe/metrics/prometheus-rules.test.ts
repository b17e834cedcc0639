/**
 * A store with Prometheus' query API that evaluates no rules — VictoriaMetrics single-node without
 * vmalert answers `/api/v1/rules` with an empty list (the body below is what 1.79 sends), others
 * answer 404 — must not make every alert read "inactive": the alert state is unknown. The metric
 * queries still answer and the store still reads as up.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { overviewResponseSchema } from "@/lib/api/overview";
import { ALERT_LIST } from "@/lib/thresholds";
import { createObserveContext } from "../context";
import { getOverview } from "../routes/overview";
import { getAlerts } from "../routes/alerts";
import { PrometheusSource } from "./prometheus";

let server: Server;
let base = "";
/** What `/api/v1/rules` answers next: status and body. */
let rules: { status: number; body: string } = { status: 200, body: "" };

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith("/api/v1/rules")) {
      res
        .writeHead(rules.status, { "content-type": rules.status === 200 ? "application/json" : "text/plain" })
        .end(rules.body);
      return;
    }
    const result = req.url?.startsWith("/api/v1/query?query=sum")
      ? [{ metric: { service: "svc", topic: "t", handler: "h", result: "success" }, value: [1, "2"] }]
      : [];
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ status: "success", data: { resultType: "vector", result } }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const ruleGroup = (names: string[]) =>
  JSON.stringify({
    status: "success",
    data: {
      groups: [
        {
          name: "g",
          interval: 15,
          rules: names.map((name) => ({
            type: "alerting",
            name,
            query: "x",
            duration: 0,
            state: "inactive",
            alerts: [],
          })),
        },
      ],
    },
  });

describe("alert state from a store that evaluates no rules", () => {
  it("an empty rule list (VictoriaMetrics without vmalert) is unknown state, with the fix named", async () => {
    rules = { status: 200, body: '{"status":"success","data":{"groups":[]}}' };
    const err = await new PrometheusSource(base, { cacheTtlMs: 0 }).alerts().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeNull();
    expect(String(err)).toMatch(/alert state unknown.*-vmalert\.proxyURL/);
    const a = await getAlerts(
      createObserveContext({ metrics: new PrometheusSource(base, { cacheTtlMs: 0 }), redis: null }),
    );
    expect(a.alerts.status).toBe("unavailable");
  });

  it("the overview keeps the store up and its figures, and says the alerts are unavailable (404 too)", async () => {
    for (const r of [
      { status: 200, body: '{"status":"success","data":{"groups":[]}}' },
      { status: 404, body: "404 page not found\n" },
    ]) {
      rules = r;
      const ctx = createObserveContext({ metrics: new PrometheusSource(base, { cacheTtlMs: 0 }), redis: null });
      const o = overviewResponseSchema.parse(await getOverview(ctx, "1h"));
      expect(o.upstream.prometheus.status).toBe("up");
      expect(o.alerts.status).toBe("unavailable");
      const row = o.handlers.find((h) => h.service === "svc" && h.handler === "h")!;
      expect(row.processedRate).toMatchObject({ status: "ok", total: 2 });
    }
  });

  it("rules that are there are read as before: the listed ones keep their state", async () => {
    rules = { status: 200, body: ruleGroup(ALERT_LIST.map((a) => a.name)) };
    const got = await new PrometheusSource(base, { cacheTtlMs: 0 }).alerts();
    expect(got.map((r) => [r.alert, r.state, r.evaluationIntervalMs])).toEqual(
      ALERT_LIST.map((a) => [a.name, "inactive", 15_000]),
    );
  });
});
