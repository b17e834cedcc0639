/**
 * `npm run bench:fleet [-- --load-ms 8000] [--viewers 50] [--json out.json]`
 *
 * The overview against a fleet (issue 17), in one run on this machine, everything on 127.0.0.1:
 * 1. Prometheus queries per refresh (the overview plus the three series the overview page asks
 *    for) for a fleet of 10 handlers (1 service × 10) and of 200 (20 × 10): counted in the app
 *    (server/observe/upstream-counter) and by Prometheus itself (`prometheus_http_requests_total`).
 *    The goal: the same fixed set whatever the number of handlers.
 * 2. `/api/overview` p50/p95/p99 with 200 handlers and 50 concurrent viewers polling back to back
 *    (the route's GET in-process, as `npm run bench:inspect` does; goal p95 ≤ 100 ms).
 * Fixture: server/testing/fleet.ts's exporter scraped every second by a private Prometheus (started
 * and stopped by pid) with the project's alert rules. No Redis: the overview's keys come from the
 * inspector's cached result, so the key inspector adds no per-handler work here either way.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { GET as overviewGET } from "@/app/api/overview/route";
import { GET as seriesGET } from "@/app/api/series/route";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { PrometheusSource } from "@/server/observe/metrics/prometheus";
import { METRIC_NAMES } from "@/names/dedup";
import { promQuery, startOwnPrometheus } from "@/server/testing/own-prometheus";
import { upstreamCalls } from "@/server/observe/core/upstream-counter";
import { buildFleet, startFleetExporter } from "@/server/testing/fleet";
import { arg } from "../lib/args";
import { runMain } from "../lib/run";
import { percentile } from "../lib/stats";

const LOAD_MS = Number(arg("load-ms", "8000"));
const VIEWERS = Number(arg("viewers", "50"));
const JSON_OUT = arg("json", "");
if (!(LOAD_MS >= 500 && LOAD_MS <= 60_000)) throw new RangeError("bench:fleet: --load-ms must be in [500, 60000]");
if (!(Number.isInteger(VIEWERS) && VIEWERS >= 1 && VIEWERS <= 200))
  throw new RangeError("bench:fleet: --viewers must be an integer in [1, 200]");

/** The series the overview page requests on every refresh (components/overview/overview-view.tsx). */
const PAGE_SERIES = ["duplicate_ratio", "check_latency", "error_rate"] as const;

/** One `/api/overview` answer, read as a browser would (the text); its handler count when `parse`. */
async function overview(parse = true): Promise<number> {
  const res = await overviewGET(new Request("http://127.0.0.1/api/overview?range=1h"));
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/api/overview answered ${res.status}`);
  // The viewers' JSON parsing would run on the server's thread here (in-process): only the length is checked.
  return parse ? ((JSON.parse(text) as { handlers?: unknown[] }).handlers?.length ?? 0) : text.length;
}

/** Requests Prometheus itself has served on its query and rules endpoints. */
async function promServed(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const line of text.split("\n")) {
    const m = /^prometheus_http_requests_total\{[^}]*handler="\/api\/v1\/(query|query_range|rules)"[^}]*\} (\S+)$/.exec(
      line,
    );
    if (m) n += Number(m[2]);
  }
  return n;
}

/** One refresh of the overview page from a cold cache: overview + its series; the queries it cost. */
async function oneRefresh(promUrl: string): Promise<{ handlers: number; app: number; prometheus: number; ms: number }> {
  setObserveContext(createObserveContext({ mode: "real", metrics: new PrometheusSource(promUrl), redis: null }));
  const a0 = upstreamCalls().prometheus;
  const p0 = await promServed(promUrl);
  const t0 = performance.now();
  const [handlers] = await Promise.all([
    overview(),
    ...PAGE_SERIES.map(async (m) =>
      (await seriesGET(new Request(`http://127.0.0.1/api/series?metric=${m}&range=1h`))).text(),
    ),
  ]);
  const ms = performance.now() - t0;
  return { handlers, app: upstreamCalls().prometheus - a0, prometheus: (await promServed(promUrl)) - p0, ms };
}

async function withFleet<T>(
  services: number,
  handlersPerService: number,
  fn: (promUrl: string) => Promise<T>,
): Promise<T> {
  const exporter = await startFleetExporter(buildFleet({ services, handlersPerService }));
  const prom = await startOwnPrometheus({
    targets: [new URL(exporter.url).host],
    ruleFiles: [`${process.cwd()}/infra/prometheus/rules/dedup.yml`],
    intervalSec: 1,
  });
  try {
    // Until every handler has a processed rate (two scrapes), bounded.
    const want = services * handlersPerService * 3;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (((await promQuery(prom.url, `count(rate(${METRIC_NAMES.processed}[1m]))`))[0]?.value ?? 0) >= want) break;
      if (Date.now() > deadline) throw new Error(`the fleet's ${want} series did not reach Prometheus within 30 s`);
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 1500)); // one more evaluation: alert states exist
    return await fn(prom.url);
  } finally {
    await prom.stop();
    await exporter.close();
  }
}

async function main(): Promise<void> {
  const load0 = loadavg();
  console.log(`[bench:fleet] ${cpus().length} × ${cpus()[0]?.model}, load ${load0.map((x) => x.toFixed(2)).join(" ")}`);
  const small = await withFleet(1, 10, oneRefresh);
  console.log(
    `1. refresh with ${small.handlers} handlers: ${small.app} Prometheus requests (app count), ${small.prometheus} served (prometheus_http_requests_total), ${small.ms.toFixed(0)} ms cold`,
  );
  const big = await withFleet(20, 10, async (url) => {
    const r = await oneRefresh(url);
    console.log(
      `1. refresh with ${r.handlers} handlers: ${r.app} Prometheus requests (app count), ${r.prometheus} served (prometheus_http_requests_total), ${r.ms.toFixed(0)} ms cold`,
    );
    // 2. 50 viewers polling back to back for LOAD_MS.
    const lat: number[] = [];
    let errors = 0;
    const a0 = upstreamCalls().prometheus;
    const end = Date.now() + LOAD_MS;
    await Promise.all(
      Array.from({ length: VIEWERS }, async () => {
        while (Date.now() < end) {
          const t = performance.now();
          try {
            if ((await overview(false)) < 1000) errors++;
          } catch {
            errors++;
          }
          lat.push(performance.now() - t);
        }
      }),
    );
    return { refresh: r, lat, errors, promCalls: upstreamCalls().prometheus - a0 };
  });
  const p = (x: number) => +percentile(big.lat, x).toFixed(1);
  console.log(
    `2. /api/overview, ${big.refresh.handlers} handlers, ${VIEWERS} viewers, ${LOAD_MS / 1000} s: ${big.lat.length} requests, p50 ${p(50)} ms, p95 ${p(95)} ms, p99 ${p(99)} ms, errors ${big.errors}, Prometheus requests ${big.promCalls}`,
  );
  const load1 = loadavg();
  const command = "npm run bench:fleet";
  const detail = {
    viewers: VIEWERS,
    loadMs: LOAD_MS,
    requests: big.lat.length,
    p50: p(50),
    p99: p(99),
    errors: big.errors,
    promRequestsDuringLoad: big.promCalls,
    queriesPerRefresh: { h10: small.app, h200: big.refresh.app },
    servedByPrometheus: { h10: small.prometheus, h200: big.refresh.prometheus },
    coldRefreshMs: { h10: +small.ms.toFixed(0), h200: +big.refresh.ms.toFixed(0) },
    loadStart: load0.map((x) => +x.toFixed(2)),
    loadEnd: load1.map((x) => +x.toFixed(2)),
  };
  // Rows of bench-results.json (scripts/bench/render.ts FIGURES).
  const out = [
    {
      name: "fleet.overview_p95_ms_200_handlers_50_viewers",
      value: p(95),
      unit: "ms",
      reference: +big.refresh.ms.toFixed(1),
      ratio: +(p(95) / big.refresh.ms).toFixed(4),
      command,
      detail,
    },
    {
      name: "fleet.prometheus_queries_200_vs_10_handlers",
      value: +(big.refresh.app / small.app).toFixed(4),
      unit: "ratio",
      reference: small.app,
      ratio: +(big.refresh.app / small.app).toFixed(4),
      command,
      detail,
    },
  ];
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(out, null, 2));
  console.log(JSON.stringify(out));
  setObserveContext(null);
}

runMain(main, "bench:fleet");
