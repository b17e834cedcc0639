/**
 * One overview answer reads one instant of the metrics store: its window figures, its "now"
 * figures and the evidence that a fault is over all carry the same `time`, so a scrape landing
 * between two of its queries (or a cached answer from an earlier moment) cannot pair a fault's
 * first errors with the quiet before it and call the fault over as it begins.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PROMQL } from "@/lib/named-queries";
import { PrometheusSource } from "../metrics/prometheus";
import { createObserveContext } from "../context";
import { getOverview } from "./overview";

let server: Server;
let base = "";
const queries: Array<{ query: string; time: string | null }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/api/v1/query")
      queries.push({ query: url.searchParams.get("query") ?? "", time: url.searchParams.get("time") });
    const data = url.pathname === "/api/v1/rules" ? { groups: [] } : { resultType: "vector", result: [] };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "success", data }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it("every query of one overview answer is evaluated at the same instant, the moment the answer was asked for", async () => {
  const ctx = createObserveContext({ metrics: new PrometheusSource(base, { cacheTtlMs: 5_000 }), redis: null });
  const before = Date.now() / 1000;
  await getOverview(ctx, "1h");
  // The scrape-coverage read (which replicas Prometheus scrapes) is about who is there, not a figure.
  const figures = queries.filter((q) => q.query !== PROMQL.consumer_instances);
  for (const name of [
    "error_rate",
    "error_rate_now",
    "error_quiet",
    "check_p99",
    "check_p99_now",
    "slow_check_quiet",
    "slow_check_rate",
  ] as const) {
    expect(
      figures.map((q) => q.query),
      name,
    ).toContain(PROMQL[name]);
  }
  const times = new Set(figures.map((q) => q.time));
  expect([...times]).toHaveLength(1);
  const t = Number([...times][0]);
  // Rounded down to the source's cache period (5 s here): answers built a moment apart share it.
  expect(t).toBeGreaterThanOrEqual(before - 5);
  expect((t * 1000) % 5_000).toBe(0);
  expect(t).toBeLessThanOrEqual(Date.now() / 1000);
});
