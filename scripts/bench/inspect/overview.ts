/**
 * Step 3 of bench:inspect: `/api/overview` p50/p95 with 50 concurrent viewers vs 1 (the route's GET
 * in-process, or HTTP against `--url`), and the upstream calls (Prometheus, Redis) each load caused.
 */
import { createServer } from "node:http";
import { Registry } from "prom-client";
import { GET as overviewGET } from "@/app/api/overview/route";
import { dedupRecorder } from "@/server/dedup";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { PrometheusSource } from "@/server/observe/metrics/prometheus";
import type { RedisLike } from "@/server/observe/redis/client";
import { upstreamCalls } from "@/server/observe/core/upstream-counter";
import { freePort } from "@/server/testing/net";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { percentile } from "../../lib/stats";
import { fmt, type InspectFigures } from "./figures";

const VIEWERS = 50;

/** `viewers` loops calling `get` back to back for `ms`: every latency, and the answers other than 200. */
async function load(
  viewers: number,
  ms: number,
  get: () => Promise<number>,
): Promise<{ lat: number[]; errors: number }> {
  const lat: number[] = [];
  let errors = 0;
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: viewers }, async () => {
      while (Date.now() < end) {
        const t = performance.now();
        const status = await get().catch(() => 599);
        lat.push(performance.now() - t);
        if (status !== 200) errors++;
        // A dashboard polls; back-to-back requests are the worst case, so no think time.
      }
    }),
  );
  return { lat, errors };
}

/** What step 3 started, for the caller to stop in its `finally` (also when the step throws half-way). */
export interface OverviewRig {
  prom?: OwnPrometheus;
  app?: ReturnType<typeof createServer>;
  driver?: ReturnType<typeof setInterval>;
}

/** A demo exporter with live counters, scraped every second by a private Prometheus. */
async function startScrapedExporter(rig: OverviewRig): Promise<OwnPrometheus> {
  const registry = new Registry();
  const rec = dedupRecorder(registry, "notification");
  rig.driver = setInterval(() => {
    for (const h of ["on-review-created", "on-user-banned", "on-page-viewed"]) {
      for (let i = 0; i < 20; i++) rec.result("demo.events", h, i < 1 ? "deduplicated" : "success");
    }
    rec.check("on-review-created", performance.now(), 0.002);
  }, 100);
  const appPort = await freePort();
  const app = createServer(
    (_req, res) =>
      void registry.metrics().then((b) => res.writeHead(200, { "content-type": registry.contentType }).end(b)),
  );
  rig.app = app;
  await new Promise<void>((r) => app.listen(appPort, "127.0.0.1", r));
  rig.prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${appPort}`],
    ruleFiles: [`${process.cwd()}/infra/prometheus/rules/dedup.yml`],
    intervalSec: 1,
  });
  await new Promise((r) => setTimeout(r, 3000)); // two scrapes, so rates exist
  return rig.prom;
}

const latencies = (lat: number[], ...ps: number[]) =>
  Object.fromEntries(ps.map((p) => [`p${p}`, +percentile(lat, p).toFixed(1)]));

/** Step 3: 1 viewer, then 50, for `loadMs` each; records the p95 at 50 and the upstream calls of both. */
export async function overviewUnderViewers(
  client: RedisLike,
  url: string | undefined,
  loadMs: number,
  rig: OverviewRig,
  f: InspectFigures,
) {
  const prom = await startScrapedExporter(rig);
  const ctx = createObserveContext({
    metrics: new PrometheusSource(prom.url),
    redis: client,
    inspector: { exactMaxKeys: 100_000_000 },
  });
  await ctx.inspector!.run("estimate");
  setObserveContext(ctx);
  const get = url
    ? async () => (await fetch(`${url.replace(/\/$/, "")}/api/overview?range=1h`)).status
    : async () => {
        const res = await overviewGET(new Request("http://localhost/api/overview?range=1h"));
        await res.text();
        return res.status;
      };
  const before1 = upstreamCalls();
  const one = await load(1, loadMs, get);
  const after1 = upstreamCalls();
  const many = await load(VIEWERS, loadMs, get);
  const after50 = upstreamCalls();
  const up1 = after1.prometheus - before1.prometheus;
  const up50 = after50.prometheus - after1.prometheus;
  f.results["api.overview_p95_ms_50_viewers"] = +percentile(many.lat, 95).toFixed(1);
  f.details.overview = {
    target: url ?? "in-process route GET",
    loadMs,
    oneViewer: { requests: one.lat.length, ...latencies(one.lat, 50, 95), prometheusCalls: up1, errors: one.errors },
    fiftyViewers: {
      requests: many.lat.length,
      ...latencies(many.lat, 50, 95, 99),
      prometheusCalls: up50,
      errors: many.errors,
    },
    redisCallsDuringLoad: after50.redis - before1.redis,
  };
  console.log(
    `\n3. /api/overview (${url ? `HTTP ${url}` : "route GET in-process"}, Prometheus ${prom.url}), ${loadMs / 1000} s each:`,
  );
  console.log(
    `   1 viewer:   ${fmt(one.lat.length)} requests, p50 ${percentile(one.lat, 50).toFixed(1)} ms, p95 ${percentile(one.lat, 95).toFixed(1)} ms, Prometheus calls ${up1}`,
  );
  console.log(
    `   50 viewers: ${fmt(many.lat.length)} requests, p50 ${percentile(many.lat, 50).toFixed(1)} ms, p95 ${percentile(many.lat, 95).toFixed(1)} ms, p99 ${percentile(many.lat, 99).toFixed(1)} ms, Prometheus calls ${up50}, errors ${many.errors}`,
  );
  if (url)
    console.log("   (upstream calls are counted in this process only: with --url they are the server's, not shown)");
  console.log(
    `   Redis calls during both loads: ${after50.redis - before1.redis} (background inspection only; the overview reads its cached result)`,
  );
  setObserveContext(null);
}

/** Stops what step 3 started: the counter driver, Prometheus, the exporter. */
export async function stopOverviewRig(rig: OverviewRig): Promise<void> {
  if (rig.driver) clearInterval(rig.driver);
  await rig.prom?.stop();
  if (rig.app) await new Promise((r) => rig.app!.close(r));
}
