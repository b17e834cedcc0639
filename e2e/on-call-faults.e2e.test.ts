/**
 * Three on-call faults against real processes, read where the on-call reads them: the handler page
 * in headless Chromium. One app (the live demo at 40 msg/s on the embedded broker) on its own
 * redis-server, scraped by its own Prometheus (1 s scrape and evaluation, the project's rules).
 * Each fault: what the page says before it, while it lasts and after it ended.
 * - Redis stopped mid-traffic: the error tile names redis_conn with its share of the errors, the
 *   counter's in Prometheus, where ≥ 99 % of the outage's errors are redis_conn; DedupRedisErrors
 *   goes pending; the outage adds no check-duration sample; Redis back: the error tile says
 *   "recovering". (Whether DedupRedisLatencyHigh is on is not asserted here: a fresh app's first,
 *   cold checks are slow and few, and keep the 5-min p99 near 50 ms for minutes. What "no sample"
 *   means for the alert past its 5-minute hold is the rules test's outage case,
 *   infra/prometheus/rules/tests/dedup.test.yml.)
 * - Prometheus stopped: every alert badge says "unknown (Prometheus unavailable since …)" with its
 *   last known state; Prometheus back on its storage: the badges show the state Prometheus has.
 * - The consumer's process starved of CPU (stopped 60 ms of every 80 ms: what a CPU quota at its
 *   limit does to a container) while Redis stays fast: the p99 tile's "now" breaches and it says
 *   "the consumer is saturated", not "Redis is slow"; the starving over, it says "recovering".
 * Timing matters (a host that alone saturates the consumer breaches the p99 before any fault):
 * `npm test` runs this file with nothing beside it.
 * Prints how long each phase took. Saves test-results/screenshots/on-call-{outage,unknown,saturated}.png.
 */
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERT_NAMES } from "@/lib/thresholds";
import { METRIC_NAMES } from "@/names/dedup";
import { promQuery } from "@/server/testing/own-prometheus";
import { collectErrors, screenshot, until } from "./harness";
import { browserForTests } from "./hooks";
import { ownStackForTests } from "./own-stack";

const SERVICE = `e2e-oncall-${randomBytes(4).toString("hex")}`;
const HANDLER = "on-review-created";
// Our own Redis and Prometheus: stopping them removes every key and sample the test wrote. No
// traffic while the app warms up (its first compiles and renders hold the event loop for seconds
// on a busy host): the checks start once the page has been painted.
const stack = ownStackForTests({ service: SERVICE, env: { DEMO_RATE: "0" } });
const browser = browserForTests();
/** The alert badges the page showed once the outage was over: the last known states Prometheus' outage must keep. */
let lastSeen = new Map<string, string>();
/** The handler page, open through all three faults, and what its console logged as errors. */
let page: Page;
let consoleErrors: string[];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A locator that lost its element to a refresh gives up after this long: `until` polls again. */
const QUICK = { timeout: 2_000 };
const text = (testId: string) => page.getByTestId(testId).innerText(QUICK);
/** Waits until the text of `testId` satisfies `ok` and returns it; a timeout names the last text seen. */
async function untilTile(what: string, ms: number, testId: string, ok: (text: string) => boolean): Promise<string> {
  let last = "";
  try {
    return await until(what, ms, async () => ((last = await text(testId)), ok(last) ? last : undefined));
  } catch (e) {
    throw new Error(`${(e as Error).message}; ${testId} said: ${JSON.stringify(last)}`);
  }
}
/** Errors counted by reason up to `atMs` (default now), from the counter in Prometheus. */
async function errorsByReason(atMs?: number): Promise<Record<string, number>> {
  const samples = await promQuery(
    stack.prom.url,
    `sum by (reason) (${METRIC_NAMES.errors}{service="${SERVICE}"})`,
    atMs,
  );
  return Object.fromEntries(samples.map((x) => [x.metric.reason ?? "", x.value]));
}
/** The word beside a tile's "now" figure ("recovering", "starting"), or null. */
const nowWord = async (tile: string) =>
  (await page.getByTestId(`${tile}-now-state`).count())
    ? page.getByTestId(`${tile}-now-state`).getAttribute("data-state", QUICK)
    : null;
/** The alert instances the handler page lists: name and badge state, in page order. */
async function badges(): Promise<Array<{ alert: string; state: string; last: string | null; text: string }>> {
  const items = page.getByTestId("handler-now").locator("li", { has: page.getByTestId("alert-state") });
  const out = [];
  for (const li of await items.all()) {
    const badge = li.getByTestId("alert-state");
    out.push({
      alert: (await li.innerText(QUICK)).split(/\s/)[0]!,
      state: (await badge.getAttribute("data-state", QUICK)) ?? "",
      last: await badge.getAttribute("data-last-state", QUICK),
      text: await badge.innerText(QUICK),
    });
  }
  return out;
}

/**
 * Starves the process group `pid` of CPU: stopped `stopMs` of every `stopMs + runMs` until the
 * returned function is called, which leaves the group running.
 */
function starve(pid: number, stopMs: number, runMs: number): () => Promise<void> {
  let on = true;
  const loop = (async () => {
    while (on) {
      process.kill(-pid, "SIGSTOP");
      await sleep(stopMs);
      process.kill(-pid, "SIGCONT");
      await sleep(runMs);
    }
  })();
  return async () => {
    on = false;
    await loop;
    process.kill(-pid, "SIGCONT");
  };
}

/** What each phase took, printed after the file. */
const phases: string[] = [];
const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;

beforeAll(async () => {
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  consoleErrors = collectErrors(page);
  await page.goto(`${stack.app.url}/handlers/${SERVICE}/${HANDLER}?refresh=5s`);
  await page.getByTestId("stat-p99").waitFor({ timeout: 30_000 });
  const res = await fetch(`${stack.app.url}/api/demo/sources`, {
    method: "PUT",
    headers: { "content-type": "application/json", origin: stack.app.url },
    body: JSON.stringify({ traffic: { enabled: true, ratePerSec: 40 } }),
  });
  expect(res.status, await res.text()).toBe(200);
}, 60_000);

afterAll(() => {
  console.log(`[on-call faults] ${phases.join("; ")}`);
});

// The faults run in this order on one app: the outage leaves DedupRedisErrors pending, which is the
// last known state Prometheus' outage must show; the starving comes last, as its slow checks stay
// in the latency alert's 5-min window.
describe("on call: three faults on the handler page, one after the other", () => {
  it("Redis stopped mid-traffic: the error tile names redis_conn, ≥ 99% of the outage's errors in the counter, DedupRedisErrors goes pending, the outage adds no latency sample; Redis back: 'recovering'", async () => {
    // Minute 0: checks flow, no error now, no connection error.
    let t = Date.now();
    await untilTile("checks on the page", 45_000, "stat-p99", (x) => /\d ms/.test(x));
    await untilTile("no error now", 15_000, "stat-errors-now", (x) => x.startsWith("now 0 errors/s"));
    expect(await text("stat-errors")).not.toContain("redis_conn");
    phases.push(`minute 0 on the page ${since(t)} after the traffic began`);

    t = Date.now();
    const stoppedAt = t;
    await stack.redis.stop();
    const during = await untilTile(
      "the outage on the error tile",
      30_000,
      "stat-errors",
      (x) => /mostly redis_conn/.test(x) && !/now 0 errors\/s/.test(x),
    );
    expect(during).toContain("(Redis unreachable)");
    expect(await nowWord("stat-errors")).not.toBe("recovering");
    await screenshot(page, "on-call-outage");
    const shown = Date.now() - t;
    await sleep(Math.max(0, 8_000 - shown));
    const restartAt = Date.now();
    const outageMs = restartAt - t;
    await stack.startRedisAgain();
    t = Date.now();
    await until("'recovering' on the error tile", 30_000, async () => (await nowWord("stat-errors")) === "recovering");
    phases.push(
      `outage on the page ${(shown / 1000).toFixed(1)} s after Redis stopped, Redis down ${(outageMs / 1000).toFixed(1)} s, 'recovering' ${since(t)} after it started again`,
    );

    // The outage's errors (the counter between a scrape after the stop and the last one before the restart)
    // are ≥ 99 % redis_conn; the page's share is the counter's over the alert's 5 min.
    const downFrom = stoppedAt + 1_500;
    const [atStop, atStart] = [await errorsByReason(downFrom), await errorsByReason(restartAt)];
    const outage = Object.fromEntries(Object.entries(atStart).map(([r, v]) => [r, v - (atStop[r] ?? 0)]));
    const outageAll = Object.values(outage).reduce((a, v) => a + v, 0);
    expect((outage.redis_conn ?? 0) / outageAll, JSON.stringify(outage)).toBeGreaterThanOrEqual(0.99);
    const pageShare = Number(/mostly redis_conn, ([\d.]+)% of errors/.exec(await text("stat-errors"))?.[1]);
    const window = await promQuery(
      stack.prom.url,
      `sum by (reason) (increase(${METRIC_NAMES.errors}{service="${SERVICE}"}[5m]))`,
    );
    const windowShare =
      (100 * (window.find((x) => x.metric.reason === "redis_conn")?.value ?? 0)) /
      window.reduce((a, x) => a + x.value, 0);
    expect(Math.abs(pageShare - windowShare), `page ${pageShare}%, Prometheus ${windowShare}%`).toBeLessThanOrEqual(1);
    phases.push(
      `outage errors ${JSON.stringify(outage)}; the page "${pageShare}% of errors" redis_conn, Prometheus' 5-min share ${windowShare.toFixed(2)}%`,
    );
    // The failed checks alert as errors, never as latency: the outage added no check-duration sample.
    const checks = async (atMs: number) =>
      (await promQuery(stack.prom.url, `sum(${METRIC_NAMES.checkDuration}_count{service="${SERVICE}"})`, atMs))[0]
        ?.value ?? 0;
    const checksBefore = await checks(downFrom);
    expect(checksBefore, "check-duration samples before the outage (the series is read)").toBeGreaterThan(0);
    expect((await checks(restartAt)) - checksBefore, "check-duration samples while Redis was down").toBeLessThanOrEqual(
      outageAll / 100,
    );
    const alerts = await until("DedupRedisErrors on the page", 15_000, async () => {
      const b = await badges();
      return b.some((x) => x.alert === ALERT_NAMES.redisErrors) ? b : undefined;
    });
    if (alerts.some((b) => b.alert === ALERT_NAMES.redisLatency))
      phases.push(`${ALERT_NAMES.redisLatency} on the page after the outage`);
    lastSeen = new Map(alerts.map((b) => [b.alert, b.state]));
    expect(consoleErrors).toEqual([]);
  }, 90_000);

  it("Prometheus stopped: every alert badge says 'unknown (Prometheus unavailable since …)' with its last known state; Prometheus back: the state Prometheus has", async () => {
    let t = Date.now();
    await stack.prom.stop();
    const unknown = await until("unknown badges", 30_000, async () => {
      const b = await badges();
      return b.length > 0 && b.every((x) => x.state === "unknown") ? b : undefined;
    });
    phases.push(`Prometheus down: 'unknown' ${since(t)} after it stopped`);
    for (const b of unknown) {
      expect(b.text).toMatch(/unknown \(Prometheus unavailable since \d\d?:\d\d:\d\d[^)]*\)/);
      expect(b.text).toMatch(/last known: (pending|firing) at \d\d?:\d\d:\d\d/);
      if (lastSeen.has(b.alert)) expect(b.last).toBe(lastSeen.get(b.alert));
    }
    expect(unknown.map((b) => b.alert)).toContain(ALERT_NAMES.redisErrors);
    await screenshot(page, "on-call-unknown");

    t = Date.now();
    await stack.startPrometheusAgain();
    let seen: unknown;
    const back = await until("known badges again", 30_000, async () => {
      const b = await badges();
      seen = b;
      return b.some((x) => x.alert === ALERT_NAMES.redisErrors) && b.every((x) => x.state !== "unknown")
        ? b
        : undefined;
    }).catch((e: Error) => {
      throw new Error(`${e.message}; the badges: ${JSON.stringify(seen)}`);
    });
    phases.push(`Prometheus back: the real states ${since(t)} after it started again`);
    const real = await promQuery(stack.prom.url, `ALERTS{alertname="${ALERT_NAMES.redisErrors}",service="${SERVICE}"}`);
    expect(real.map((s) => s.metric.alertstate)).toContain(
      back.find((x) => x.alert === ALERT_NAMES.redisErrors)!.state,
    );
    expect(consoleErrors).toEqual([]);
  }, 70_000);

  it("the consumer starved of CPU, Redis fast: the p99 tile says 'the consumer is saturated', not 'Redis is slow'; the starving over: 'recovering'", async () => {
    // Before: Redis' own time is known and the checks are fast now (the window may hold the host's load).
    const nowP99 = (tile: string) => Number(/now ([\d.,]+) ms/.exec(tile)?.[1]?.replaceAll(",", "") ?? NaN);
    await untilTile(
      "Redis' own time and fast checks now on the p99 tile",
      30_000,
      "stat-p99",
      (x) => /Redis \d+ µs\/call/.test(x) && nowP99(x) <= 50,
    );
    let t = Date.now();
    const stopStarving = starve(stack.app.pid, 60, 20);
    let saturated: string;
    try {
      saturated = await untilTile(
        "'the consumer is saturated' with slow checks now",
        45_000,
        "stat-p99",
        (x) => x.includes("the consumer is saturated") && nowP99(x) > 50,
      );
      await screenshot(page, "on-call-saturated");
    } finally {
      await stopStarving();
    }
    phases.push(`starved: 'the consumer is saturated' ${since(t)} after the starving began`);
    // The diagnosis stands beside the figures it rests on: the event loop's p99 above Redis' own time per call.
    const figures = /event loop p99 ([\d.,]+) ms · Redis (\d+) µs\/call · the consumer is saturated/.exec(saturated);
    expect(figures, saturated).not.toBeNull();
    const [loopMs, redisUs] = [Number(figures![1]!.replaceAll(",", "")), Number(figures![2])];
    expect(redisUs).toBeLessThan(1000);
    expect(loopMs * 1000).toBeGreaterThan(redisUs);
    t = Date.now();
    await until("'recovering' on the p99 tile", 30_000, async () => (await nowWord("stat-p99")) === "recovering");
    phases.push(`starving over: 'recovering' ${since(t)} after`);
    expect(consoleErrors).toEqual([]);
  }, 90_000);
});
