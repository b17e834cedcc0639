/**
 * "Now" against the alert window on real processes: an own `redis-server` (DEBUG SLEEP for a
 * slowdown, stopped for an outage), an own Prometheus scraping the consumer's registry every second,
 * and a consumer checking ~100 messages/s through the Deduplicator on that Redis. What the page
 * reads — `GET /api/overview`, this route — says, during each fault, "now" breaching and no
 * "recovering"; after the fault ends, "recovering" (fine now, the 5-min window still breaching)
 * within two scrapes of the end plus the time the answer takes, and it keeps saying so while the
 * window holds the fault.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { overviewResponseSchema, type OverviewHandler } from "@/lib/api/overview";
import { nowState } from "@/lib/now-state";
import { THRESHOLDS } from "@/lib/thresholds";
import { deduplicator } from "@/server/dedup/deduplicator";
import { newMessage } from "@/server/dedup/message";
import { RedisRepository } from "@/server/dedup/redis-repository";
import { createDedupRedis } from "@/server/dedup-redis";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { PrometheusSource } from "@/server/observe/metrics/prometheus";
import { freePort } from "@/server/testing/net";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { consumerInfoGauge } from "@/server/transport/replica-id";
import { GET as seriesGET } from "../series/route";
import { GET } from "./route";

const SCRAPE_SEC = 1;
const SERVICE = `nowwin${randomBytes(4).toString("hex")}`;
const HANDLER = "h";

let redis: OwnRedis;
let prom: OwnPrometheus | undefined;
let app: Server | undefined;
let consumerRedis: ReturnType<typeof createDedupRedis>;
let traffic: { stop: () => Promise<void> } | undefined;
/** While true the consumer's /metrics answers 503: Prometheus' scrapes fail (the app "down"). */
let metricsDown = false;

/** The handler's row as the page reads it: the overview route's answer. */
async function row(): Promise<OverviewHandler | undefined> {
  const res = await GET(new Request("http://localhost/api/overview?range=15m"));
  const body = overviewResponseSchema.parse(await res.json());
  return body.handlers.find((h) => h.service === SERVICE && h.handler === HANDLER);
}

/** Polls the page's row every 250 ms until `f` returns a value, within `ms`. */
async function until<T>(what: string, ms: number, f: (h: OverviewHandler) => T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const h = await row().catch(() => undefined);
    const v = h ? f(h) : undefined;
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}; last row: ${JSON.stringify(h?.now)} p99 ${JSON.stringify(h?.checkLatency)} errors ${JSON.stringify(h?.errorRates)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const p99State = (h: OverviewHandler) => nowState(h.now?.status === "ok" ? h.now.checkP99Seconds : null, h.checkLatency.status === "ok" ? h.checkLatency.p99Seconds : null, THRESHOLDS.checkP99Seconds);
const errorState = (h: OverviewHandler) => nowState(h.now?.status === "ok" ? h.now.errorRate : null, h.errorRates.status === "ok" ? h.errorRates.total : null, THRESHOLDS.errorRate);

/** ~100 dedup checks/s (fail-open, at most 20 in flight) until stopped. */
function startTraffic(registry: Registry): { stop: () => Promise<void> } {
  const run = deduplicator({ repository: new RedisRepository(consumerRedis), service: SERVICE, registry, hotKeys: null, ttlMs: 600_000, leaseMs: 60_000 })(async () => undefined);
  let stopped = false;
  let inFlight = 0;
  let n = 0;
  const loop = (async () => {
    while (!stopped) {
      if (inFlight < 20) {
        inFlight++;
        const m = newMessage(`${SERVICE}-${n++}`, "p");
        Object.assign(m.context, { topic: "t", handler: HANDLER });
        void run(m)
          .catch(() => undefined)
          .finally(() => inFlight--);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

beforeAll(async () => {
  redis = await startOwnRedis({ args: ["--enable-debug-command", "local"] });
  consumerRedis = createDedupRedis({ url: redis.url });
  const registry = new Registry();
  consumerInfoGauge(registry).set({ service: SERVICE, replica: "r1" }, 1);
  const port = await freePort();
  app = createServer((_req, res) => {
    if (metricsDown) {
      res.writeHead(503).end();
      return;
    }
    void registry.metrics().then((body) => {
      res.writeHead(200, { "content-type": registry.contentType });
      res.end(body);
    });
  });
  await new Promise<void>((r) => app!.listen(port, "127.0.0.1", r));
  prom = await startOwnPrometheus({ targets: [`127.0.0.1:${port}`], ruleFiles: [], intervalSec: SCRAPE_SEC });
  setObserveContext(createObserveContext({ metrics: new PrometheusSource(prom.url, { cacheTtlMs: 0 }), redis: null, answerTtlMs: 0 }));
  traffic = startTraffic(registry);
}, 60_000);

afterAll(async () => {
  await traffic?.stop();
  setObserveContext(null);
  await prom?.stop();
  await new Promise((r) => app?.close(r));
  consumerRedis?.disconnect();
  // Our own Redis without persistence: stopping it removes every key the test wrote.
  await redis?.stop();
}, 60_000);

it("a Redis slowdown, then an outage: the page says 'recovering' within two scrapes of each end, while the 5-min window still breaches", async () => {
  // Before any fault: checks are fast now and in the window.
  await until("checks in Prometheus", 30_000, (h) => (h.now?.status === "ok" && h.now.checkP99Seconds !== null ? true : undefined));

  // Slowdown: Redis blocked 100 ms at a time for 8 s.
  const sleeper = new Redis(redis.url);
  const slowUntil = Date.now() + 8_000;
  const slow = (async () => {
    while (Date.now() < slowUntil) await sleeper.call("DEBUG", "SLEEP", "0.1");
  })();
  const during = await until("the slowdown now", 15_000, (h) => (h.now?.status === "ok" && (h.now.checkP99Seconds ?? 0) > THRESHOLDS.checkP99Seconds ? h : undefined));
  expect(p99State(during)).not.toBe("recovering");
  await slow;
  const slowEnd = Date.now();
  sleeper.disconnect();
  const afterSlow = await until("'recovering' after the slowdown", 20_000, (h) => (p99State(h) === "recovering" ? h : undefined));
  const slowDelay = Date.now() - slowEnd;
  expect(afterSlow.checkLatency.status === "ok" && afterSlow.checkLatency.p99Seconds!).toBeGreaterThan(THRESHOLDS.checkP99Seconds);
  expect(afterSlow.now?.status === "ok" && afterSlow.now.checkP99Seconds!).toBeLessThanOrEqual(THRESHOLDS.checkP99Seconds);
  // Clean from the second scrape after the end; the rest is the answer's own time on a loaded host.
  expect(slowDelay).toBeLessThan(2 * SCRAPE_SEC * 1000 + 4_000);

  // Outage: the server stopped for 8 s, started again (empty) on the same port.
  const port = redis.port;
  await redis.stop();
  const down = await until("the outage now", 15_000, (h) => (h.now?.status === "ok" && (h.now.errorRate ?? 0) > 0 ? h : undefined));
  expect(errorState(down)).not.toBe("recovering");
  await new Promise((r) => setTimeout(r, 6_000));
  redis = await startOwnRedis({ port, args: ["--enable-debug-command", "local"] });
  while (consumerRedis.status !== "ready") await new Promise((r) => setTimeout(r, 20));
  const upAt = Date.now();
  const afterOutage = await until("'recovering' after the outage", 20_000, (h) => (errorState(h) === "recovering" ? h : undefined));
  const outageDelay = Date.now() - upAt;
  expect(afterOutage.errorRates.status === "ok" && afterOutage.errorRates.total).toBeGreaterThan(0);
  expect(afterOutage.errorRates.status === "ok" && Object.keys(afterOutage.errorRates.byReason)).toContain("redis_conn");
  expect(outageDelay).toBeLessThan(2 * SCRAPE_SEC * 1000 + 4_000);

  // Still "recovering" a few scrapes later: the window keeps the fault for 5 min, now stays clean.
  await new Promise((r) => setTimeout(r, 3_000));
  const later = await row();
  expect(later && errorState(later)).toBe("recovering");
  console.log(`[now-window] 'recovering' ${slowDelay} ms after the slowdown ended, ${outageDelay} ms after the outage ended (scrape ${SCRAPE_SEC} s)`);
}, 150_000);

it("scrapes failing for 6 s: the duplicate-ratio chart breaks there instead of drawing the 5-min rate across", async () => {
  const points = async () => {
    const res = await seriesGET(new Request(`http://localhost/api/series?${new URLSearchParams({ metric: "duplicate_ratio", service: SERVICE, handler: HANDLER, range: "5m", step: "1" })}`));
    const body = (await res.json()) as { data: { status: string; series?: Array<{ points: Array<[number, number | null]> }> } };
    return body.data.series?.[0]?.points ?? [];
  };
  const downFrom = Math.floor(Date.now() / 1000);
  metricsDown = true;
  await new Promise((r) => setTimeout(r, 6_000));
  metricsDown = false;
  const downTo = Math.floor(Date.now() / 1000);
  await new Promise((r) => setTimeout(r, 3_000));
  const pts = await points();
  const inside = pts.filter(([t]) => t > downFrom + 2 && t < downTo - 1);
  const before = pts.filter(([t]) => t < downFrom - 2 && t > downFrom - 30);
  const after = pts.filter(([t]) => t > downTo + 2);
  // The 5-min rate had a value all along; the chart has one only where the service was scraped.
  expect(before.some(([, v]) => v !== null)).toBe(true);
  expect(inside.length).toBeGreaterThan(0);
  expect(inside.every(([, v]) => v === null)).toBe(true);
  expect(after.some(([, v]) => v !== null)).toBe(true);
}, 60_000);
