/**
 * The shipped scrape job (infra/prometheus/prometheus.yml's `dedup-health`, with its relabelling)
 * in a real Prometheus: an app in embedded mode on the scraped port — its demo's counters under the
 * real service's names, faults included — leaves no series but `up`, so real mode started after it
 * opens on the real service's figures only; an app in real mode is stored as before.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { GET as metricsGET } from "@/app/api/metrics/route";
import { DASHBOARD_SCRAPE_JOB } from "@/lib/alert-exprs";
import { METRIC_NAMES } from "@/names/dedup";
import { dedupRecorder } from "@/server/dedup";
import { appRegistry } from "@/server/registry";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";

const CONFIG = fileURLToPath(new URL("./prometheus.yml", import.meta.url));
const service = `embedded-scrape-${Math.random().toString(36).slice(2, 8)}`;

configOfFile();
let server: Server;
let prom: OwnPrometheus;
/** Which mode the app answering the scrape is in now. */
let mode: "embedded" | "real" = "embedded";

beforeAll(async () => {
  // The demo's faults as the issue saw them: errors and runs without a dedup check, on the app's registry.
  const rec = dedupRecorder(appRegistry(), service);
  rec.register("demo.events", "on-user-banned");
  for (let i = 0; i < 35; i++) rec.error("redis_conn", "on-user-banned");
  server = createServer((_req, res) => {
    useConfig(mode === "embedded" ? {} : { REDIS_URL: "redis://127.0.0.1:1", KAFKA_BROKERS: "127.0.0.1:1" });
    void metricsGET()
      .then((r) => r.text())
      .then((t) => res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(t));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const shipped = parse(readFileSync(CONFIG, "utf8")) as { scrape_configs: Array<Record<string, unknown>> };
  const job = shipped.scrape_configs.find((j) => j.job_name === DASHBOARD_SCRAPE_JOB)!;
  const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  prom = await startOwnPrometheus({
    targets: [],
    ruleFiles: [],
    jobs: [{ ...job, static_configs: [{ targets: [target] }] }],
  });
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  await new Promise((r) => server?.close(r));
});

/** Polls `expr` until `ok` holds for its samples (scrapes every second), or fails after 15 s. */
async function until(expr: string, ok: (n: number) => boolean): Promise<number> {
  let n = -1;
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
    n = (await promQuery(prom.url, expr)).length;
    if (ok(n)) return n;
  }
  return n;
}

describe("the shipped Prometheus never stores an embedded app's series", () => {
  it("an app in embedded mode is up, and none of its demo's series is stored", async () => {
    expect(await until(`up{job="${DASHBOARD_SCRAPE_JOB}"} == 1`, (n) => n === 1)).toBe(1);
    // Scrapes went on for a while: still nothing of the demo, nor anything else of the app.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await promQuery(prom.url, `${METRIC_NAMES.errors}{service="${service}"}`)).toEqual([]);
    expect(await promQuery(prom.url, `{job="${DASHBOARD_SCRAPE_JOB}",__name__!~"up|scrape_.*"}`)).toEqual([]);
  }, 30_000);

  it("the same app in real mode is stored as before", async () => {
    mode = "real";
    const n = await until(`${METRIC_NAMES.errors}{service="${service}",reason="redis_conn"}`, (x) => x > 0);
    expect(n).toBe(1);
    const [s] = await promQuery(prom.url, `${METRIC_NAMES.errors}{service="${service}",reason="redis_conn"}`);
    expect(s?.metric.mode).toBeUndefined();
  }, 30_000);
});
