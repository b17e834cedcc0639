/**
 * A service that is not ours, as an SRE sees it: a consumer exporting only the design note's four
 * metrics (server/testing/note-exporter), scraped every second by a Prometheus of the test's own
 * with the project's rules, and the built app in real mode pointed at it (`DEMO=off`). No figure of
 * its overview row, its handler page, `/api/overview` or `/api/hot-keys` may read zero or "no …"
 * for a signal it does not export: each says "not measured" with the metric it would need, and the
 * latency split "not known for this runtime". Its exporter stopped, every figure reads "no scrape
 * since …" within two scrapes (plus the page's 5 s refresh) and its lines stop there.
 * Screenshots: not-measured-handler, no-scrape-handler.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hotKeysResponseSchema } from "@/lib/api/hot-keys";
import { overviewResponseSchema, type OverviewHandler } from "@/lib/api/overview";
import { seriesResponseSchema } from "@/lib/api/series";
import { OPTIONAL_SIGNALS } from "@/lib/signals";
import { HOT_UUID_METRICS, METRIC_NAMES } from "@/names/dedup";
import { RUNTIME_SIGNAL_METRICS } from "@/names/runtime";
import { startNoteExporter, type NoteExporter } from "@/server/testing/note-exporter";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { collectErrors, launchBrowser, REAL_ENV, ROOT, screenshot, startApp, until, type App } from "./harness";

const tag = randomBytes(3).toString("hex");
const SERVICE = `note-${tag}`;
const HANDLER = "on-order";
const SCRAPE_SEC = 1;

let note: NoteExporter;
let prom: OwnPrometheus;
let app: App;
let browser: Browser;
let traffic: NodeJS.Timeout | undefined;

const handlerUrl = () => `${app.url}/handlers/${SERVICE}/${HANDLER}?range=15m&refresh=5s`;

async function row(): Promise<OverviewHandler | undefined> {
  const o = overviewResponseSchema.parse(await (await fetch(`${app.url}/api/overview?range=15m`)).json());
  return o.handlers.find((h) => h.service === SERVICE && h.handler === HANDLER);
}

/** Every "no …" or all-clear sentence a page would say of a signal this service does not export. */
const FALSE_ALL_CLEAR = [
  /no duplicate swallowed/i,
  /no payload conflict/i,
  /no lease counter/i,
  /no handler attempt timed/i,
  /nothing sent to the DLQ/i,
  /Redis is slow|mostly Redis/,
];

beforeAll(async () => {
  note = await startNoteExporter({ service: SERVICE, handler: HANDLER, topic: `orders-${tag}` });
  // 19 % duplicates: what the note's consumer saw while the page said "no duplicate swallowed".
  traffic = setInterval(() => note.process(100, 19, 0.004), 1000);
  prom = await startOwnPrometheus({
    targets: [note.target],
    ruleFiles: [join(ROOT, "infra/prometheus/rules/dedup.yml")],
    intervalSec: SCRAPE_SEC,
  });
  app = await startApp({ env: { ...REAL_ENV, DEMO: "off", PROMETHEUS_URL: prom.url } });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  clearInterval(traffic);
  await browser?.close();
  await app?.stop();
  await prom?.stop();
  await note?.stop();
});

describe("a service exporting only the note's four metrics", () => {
  it("the API says 'unknown' with the metric it needs for every optional signal, never a zero", async () => {
    const h = await until("the note's service with a ratio in /api/overview", 60_000, async () => {
      const r = await row();
      return r && r.duplicateRatio.status === "ok" && r.duplicateRatio.value !== null ? r : undefined;
    });
    expect(h.scrape).toEqual({ status: "live" });
    expect(h.unchecked).toMatchObject({ status: "unknown", metric: METRIC_NAMES.unchecked });
    expect(h.signals).toMatchObject({
      byCause: { status: "unknown", metric: OPTIONAL_SIGNALS.byCause },
      payloadConflicts: { status: "unknown", metric: OPTIONAL_SIGNALS.payloadConflicts },
      leases: { status: "unknown", metric: OPTIONAL_SIGNALS.leaseLost },
      hotUuids: { status: "unknown", metric: HOT_UUID_METRICS.errorBound },
    });
    expect(h.latencyParts?.runtime).toMatchObject({ status: "unknown", metrics: [...RUNTIME_SIGNAL_METRICS] });
    expect(h.latencyParts?.verdict).not.toBe("redis");
    const hot = hotKeysResponseSchema.parse(
      await (await fetch(`${app.url}/api/hot-keys?service=${SERVICE}&handler=${HANDLER}`)).json(),
    );
    expect(hot.scope).toBe("fleet");
    expect(hot.notMeasured).toMatchObject({ status: "unknown", metric: HOT_UUID_METRICS.errorBound });
    for (const metric of ["duplicates_by_cause", "payload_conflicts", "lease_events", "handler_time", "dlq_rate"]) {
      const s = seriesResponseSchema.parse(
        await (
          await fetch(`${app.url}/api/series?metric=${metric}&service=${SERVICE}&handler=${HANDLER}&range=15m`)
        ).json(),
      );
      expect(s.data.status, metric).toBe("unknown");
    }
  }, 90_000);

  it("the overview row and the handler page say 'not measured' with each signal's name, and no false all-clear", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = collectErrors(page);
    // The overview: one handler is a section of its own (a fleet of seven or more is a table).
    await page.goto(`${app.url}/?range=15m&refresh=5s`);
    const section = page.locator(`[data-testid="handler-section"][data-handler="${SERVICE}/${HANDLER}"]`);
    await expect
      .poll(
        async () =>
          (await section
            .getByTestId("stat-ratio")
            .textContent()
            .catch(() => "")) ?? "",
        { timeout: 30_000 },
      )
      .toMatch(/%/);
    const overviewLine = (await section.getByTestId("not-measured-signals").textContent()) ?? "";
    for (const m of [OPTIONAL_SIGNALS.byCause, HOT_UUID_METRICS.errorBound, METRIC_NAMES.unchecked])
      expect(overviewLine).toContain(m);
    expect(await section.getByTestId("stat-p99").textContent()).toContain("not known for this runtime");
    for (const re of FALSE_ALL_CLEAR) expect((await section.textContent()) ?? "").not.toMatch(re);

    await page.goto(handlerUrl());
    const notMeasured = page.getByTestId("not-measured-signals");
    await notMeasured.waitFor({ timeout: 30_000 });
    const line = (await notMeasured.textContent()) ?? "";
    for (const m of [
      OPTIONAL_SIGNALS.byCause,
      OPTIONAL_SIGNALS.payloadConflicts,
      OPTIONAL_SIGNALS.leaseLost,
      HOT_UUID_METRICS.errorBound,
      METRIC_NAMES.unchecked,
    ])
      expect(line).toContain(m);
    expect(await page.getByTestId("stat-p99").textContent()).toContain("not known for this runtime");
    // Each chart and table of a signal it does not export says so with its metric (below the fold: scrolled into view).
    for (const [panel, metric] of [
      ["chart-duplicate-causes", OPTIONAL_SIGNALS.byCause],
      ["chart-payload-conflicts", OPTIONAL_SIGNALS.payloadConflicts],
      ["chart-lease-events", OPTIONAL_SIGNALS.leaseLost],
      ["hot-keys", HOT_UUID_METRICS.errorBound],
    ] as const) {
      const p = page.getByTestId(panel);
      await until(`${panel} in view`, 20_000, async () => {
        await page.mouse.wheel(0, 400);
        return (await p.count()) > 0;
      });
      await p.scrollIntoViewIfNeeded();
      const nm = p.getByTestId("not-measured");
      await nm.waitFor({ timeout: 20_000 });
      expect(await nm.textContent()).toBe(`not measured for this service: export ${metric}`);
    }
    const text = (await page.locator("main").textContent()) ?? "";
    for (const re of FALSE_ALL_CLEAR) expect(text).not.toMatch(re);
    await screenshot(page, "not-measured-handler");
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("its exporter stopped: 'no scrape since' within two scrapes on every figure, and its lines stop", async () => {
    const page: Page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = collectErrors(page);
    await page.goto(handlerUrl());
    await page.getByTestId("stat-rate").waitFor({ timeout: 30_000 });
    clearInterval(traffic);
    await note.stop();
    const stoppedAt = Date.now();
    const h = await until("'no scrape since' in /api/overview", 10_000, async () => {
      const r = await row();
      return r?.scrape?.status === "down" ? r : undefined;
    });
    const apiMs = Date.now() - stoppedAt;
    // Two scrapes, and the poll's half second.
    expect(apiMs).toBeLessThanOrEqual(2 * SCRAPE_SEC * 1000 + 1_000);
    const detail = h.scrape?.status === "down" ? h.scrape.detail : "";
    expect(detail).toMatch(/^no scrape since \d\d:\d\d:\d\d UTC$/);
    for (const f of [h.duplicateRatio, h.processedRate, h.checkLatency, h.errorRates, h.now])
      expect(f).toMatchObject({ status: "unavailable", detail });
    // The page, at its next 5 s refresh: every tile says it, none keeps the last rate.
    for (const tile of ["stat-ratio", "stat-rate", "stat-p99", "stat-errors"]) {
      await expect
        .poll(async () => (await page.getByTestId(tile).textContent()) ?? "", { timeout: 10_000 })
        .toContain(detail);
    }
    expect(await page.getByTestId("stat-rate").textContent()).not.toMatch(/msg\/s/);
    await page.goto(`${app.url}/?range=15m&refresh=5s`);
    const section = page.locator(`[data-testid="handler-section"][data-handler="${SERVICE}/${HANDLER}"]`);
    await expect
      .poll(
        async () =>
          (await section
            .getByTestId("no-scrape")
            .textContent()
            .catch(() => "")) ?? "",
        { timeout: 15_000 },
      )
      .toContain(detail);
    for (const tile of ["stat-ratio", "stat-rate", "stat-p99", "stat-errors"])
      expect(await section.getByTestId(tile).textContent()).toContain(detail);
    // The chart's line stops where the scrapes did (a 5-min rate would draw on for minutes).
    await new Promise((r) => setTimeout(r, 5_000));
    const s = seriesResponseSchema.parse(
      await (
        await fetch(`${app.url}/api/series?metric=processed_rate&service=${SERVICE}&handler=${HANDLER}&range=15m`)
      ).json(),
    );
    expect(s.scrape).toMatchObject({ status: "down", detail });
    const success = s.data.status === "ok" ? s.data.series.find((l) => l.labels.result === "success") : undefined;
    const after = success?.points.filter(([t]) => t > stoppedAt / 1000 + SCRAPE_SEC) ?? [];
    expect(after.length).toBeGreaterThan(0);
    expect(
      after.every(([, v]) => v === null),
      JSON.stringify(after),
    ).toBe(true);
    expect(success!.points.some(([, v]) => v !== null && v > 0)).toBe(true);
    await page.goto(handlerUrl());
    await page
      .getByTestId("chart-processed")
      .scrollIntoViewIfNeeded()
      .catch(() => undefined);
    await expect
      .poll(
        async () =>
          (await page
            .getByTestId("chart-processed")
            .getByTestId("no-scrape")
            .textContent()
            .catch(() => "")) ?? "",
        { timeout: 20_000 },
      )
      .toBe(detail);
    await screenshot(page, "no-scrape-handler");
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
