/**
 * "Now" against the alert window on real processes: an own `redis-server` (DEBUG SLEEP for a
 * slowdown, stopped for an outage), an own Prometheus scraping the consumer's registry every second,
 * and a consumer checking up to ~800 messages/s through the Deduplicator on that Redis. What the
 * page reads — `GET /api/overview`, this route — says, during each fault, "now" breaching and no
 * "recovering"; after the fault ends, "recovering" (the fault over, the 5-min window still
 * breaching) at the first scrape whose quiet since the last slow / failed check passes the bound at
 * the window's rate (lib/now-state) — within one scrape interval of the end plus that bound and the
 * answer's own time — and it keeps saying so while the window holds the fault. Each fault makes
 * thousands of bad checks, so the bound (6.9 / their rate over 5 min) is a fraction of the interval.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { overviewResponseSchema, type OverviewHandler } from "@/lib/api/overview";
import { nowState, quietBoundSeconds } from "@/lib/now-state";
import { THRESHOLDS } from "@/lib/thresholds";
import { deduplicator, newMessage, RedisRepository } from "@/server/dedup";
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

const POLL_MS = 250;

/** The answer's time of the last two polls (ms): the scrape that turned the word may have landed during the one before. */
let answerMs: [number, number] = [0, 0];

/** Polls the page's row every {@link POLL_MS} until `f` returns a value, within `ms`. */
async function until<T>(what: string, ms: number, f: (h: OverviewHandler) => T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const asked = Date.now();
    const h = await row().catch(() => undefined);
    answerMs = [answerMs[1], Date.now() - asked];
    const v = h ? f(h) : undefined;
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${ms} ms waiting for ${what}; last row: ${JSON.stringify(h?.now)} p99 ${JSON.stringify(h?.checkLatency)} errors ${JSON.stringify(h?.errorRates)}`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const ok = <T extends { status: string }>(f: T | undefined) =>
  f?.status === "ok" ? (f as Extract<T, { status: "ok" }>) : undefined;
/** The p99 tile's word and its quiet bound (s), as the page computes them. */
const p99Of = (h: OverviewHandler) => ({
  word: nowState(ok(h.now)?.checkP99Seconds, ok(h.checkLatency)?.p99Seconds, THRESHOLDS.checkP99Seconds, {
    seconds: ok(h.now)?.slowCheckQuietSeconds,
    badRate: ok(h.now)?.slowCheckRate,
    nowSuffices: true,
  }),
  bound: quietBoundSeconds(ok(h.now)?.slowCheckRate),
  quiet: ok(h.now)?.slowCheckQuietSeconds,
});
/** The error tile's word and its quiet bound (s). */
const errorsOf = (h: OverviewHandler) => ({
  word: nowState(ok(h.now)?.errorRate, ok(h.errorRates)?.total, THRESHOLDS.errorRate, {
    seconds: ok(h.now)?.errorQuietSeconds,
    badRate: ok(h.errorRates)?.total,
  }),
  bound: quietBoundSeconds(ok(h.errorRates)?.total),
  quiet: ok(h.now)?.errorQuietSeconds,
});

/**
 * The delay from a fault's end to the first answer saying "recovering", against its bound: one
 * scrape interval after the quiet bound, plus the poll period and the last two answers' own time.
 */
async function recovering(what: string, endedAt: number, tile: (h: OverviewHandler) => ReturnType<typeof p99Of>) {
  const h = await until(`'recovering' after ${what}`, 20_000, (x) => (tile(x).word === "recovering" ? x : undefined));
  const delayMs = Date.now() - endedAt;
  const { bound, quiet } = tile(h);
  // The fault was large enough for "within one scrape" to be the claim: its bound well under the interval.
  expect(bound!, `${what}: quiet bound`).toBeLessThan(SCRAPE_SEC);
  expect(quiet!).toBeGreaterThanOrEqual(bound!);
  const limitMs = SCRAPE_SEC * 1000 + bound! * 1000 + POLL_MS + answerMs[0] + answerMs[1];
  expect(
    delayMs,
    `${what}: 'recovering' ${delayMs} ms after the end (limit ${Math.round(limitMs)} ms)`,
  ).toBeLessThanOrEqual(limitMs);
  return { h, delayMs, bound: bound!, quiet: quiet! };
}

/** Up to ~800 dedup checks/s (fail-open, at most 300 in flight) until stopped. */
function startTraffic(registry: Registry): { stop: () => Promise<void> } {
  const run = deduplicator({
    repository: new RedisRepository(consumerRedis),
    service: SERVICE,
    registry,
    hotKeys: null,
    ttlMs: 600_000,
    leaseMs: 60_000,
  })(async () => undefined);
  let stopped = false;
  let inFlight = 0;
  let n = 0;
  const loop = (async () => {
    while (!stopped) {
      for (let i = 0; i < 8 && inFlight < 300; i++) {
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
  setObserveContext(
    createObserveContext({ metrics: new PrometheusSource(prom.url, { cacheTtlMs: 0 }), redis: null, answerTtlMs: 0 }),
  );
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

it("a Redis slowdown, then an outage: the page says 'recovering' within one scrape of each end (plus the quiet bound), while the 5-min window still breaches", async () => {
  // Before any fault: checks are fast now and in the window.
  await until("checks in Prometheus", 30_000, (h) =>
    h.now?.status === "ok" && h.now.checkP99Seconds !== null ? true : undefined,
  );

  // Slowdown: Redis blocked 250 ms at a time for 10 s (most checks wait longer than 50 ms).
  const sleeper = new Redis(redis.url);
  const slowUntil = Date.now() + 10_000;
  const slow = (async () => {
    while (Date.now() < slowUntil) await sleeper.call("DEBUG", "SLEEP", "0.25");
  })();
  const during = await until("the slowdown now", 15_000, (h) =>
    h.now?.status === "ok" && (h.now.checkP99Seconds ?? 0) > THRESHOLDS.checkP99Seconds ? h : undefined,
  );
  expect(p99Of(during).word).not.toBe("recovering");
  await slow;
  const slowEnd = Date.now();
  sleeper.disconnect();
  const afterSlow = await recovering("the slowdown", slowEnd, p99Of);
  expect(ok(afterSlow.h.checkLatency)?.p99Seconds).toBeGreaterThan(THRESHOLDS.checkP99Seconds);

  // Outage: the server stopped for 10 s, started again (empty) on the same port.
  const port = redis.port;
  await redis.stop();
  const down = await until("the outage now", 15_000, (h) =>
    h.now?.status === "ok" && (h.now.errorRate ?? 0) > 0 ? h : undefined,
  );
  expect(errorsOf(down).word).not.toBe("recovering");
  await new Promise((r) => setTimeout(r, 8_000));
  expect(errorsOf((await row())!).word, "while Redis is down").not.toBe("recovering");
  redis = await startOwnRedis({ port, args: ["--enable-debug-command", "local"] });
  while (consumerRedis.status !== "ready") await new Promise((r) => setTimeout(r, 20));
  const upAt = Date.now();
  const afterOutage = await recovering("the outage", upAt, errorsOf);
  expect(ok(afterOutage.h.errorRates)?.total).toBeGreaterThan(0);
  expect(Object.keys(ok(afterOutage.h.errorRates)?.byReason ?? {})).toContain("redis_conn");

  // Still "recovering" a few scrapes later: the window keeps the fault for 5 min, the quiet grows.
  await new Promise((r) => setTimeout(r, 3_000));
  const later = await row();
  expect(later && errorsOf(later).word).toBe("recovering");
  const fig = (x: typeof afterSlow) =>
    `${x.delayMs} ms (bound ${x.bound.toFixed(2)} s, quiet ${x.quiet.toFixed(2)} s at the scrape)`;
  console.log(
    `[now-window] 'recovering' ${fig(afterSlow)} after the slowdown ended, ${fig(afterOutage)} after the outage ended (scrape ${SCRAPE_SEC} s, poll ${POLL_MS} ms)`,
  );
}, 150_000);

it("scrapes failing for 6 s: the duplicate-ratio chart breaks there instead of drawing the 5-min rate across", async () => {
  const points = async () => {
    const res = await seriesGET(
      new Request(
        `http://localhost/api/series?${new URLSearchParams({ metric: "duplicate_ratio", service: SERVICE, handler: HANDLER, range: "5m", step: "1" })}`,
      ),
    );
    const body = (await res.json()) as {
      data: { status: string; series?: Array<{ points: Array<[number, number | null]> }> };
    };
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
