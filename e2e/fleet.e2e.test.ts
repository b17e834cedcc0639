/**
 * As an SRE pointing the dashboard at a fleet it has never seen: the
 * fixture exporter (server/testing/fleet.ts: 20 services × 10 handlers, svc-03/h-02 and svc-11/h-07
 * at 25 % duplicates, svc-07 slow, svc-15 with Redis timeouts) scraped every second by a private
 * Prometheus with the project's rules, and the built app with `DEMO=off PROMETHEUS_URL=…`.
 * The overview is a table of 200 rows, worst first; the service filter and the handler search work
 * and land in the URL; a row opens the handler page. At 390 px the alert names wrap, not cut.
 * Screenshots: fleet-table, header-390px.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ALERT_LIST } from "@/lib/thresholds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { buildFleet, startFleetExporter, type FleetExporter } from "../server/testing/fleet";
import { collectErrors, launchBrowser, ROOT, screenshot, startApp, type App } from "./harness";

const HOT = ["svc-03/h-02", "svc-11/h-07"];
const RANK: Record<string, number> = { firing: 2, pending: 1, inactive: 0 };

let exporter: FleetExporter;
let prom: OwnPrometheus;
let app: App;
let browser: Browser;

interface RowInfo {
  id: string;
  state: string;
  ratio: number | null;
}

async function rows(page: Page): Promise<RowInfo[]> {
  return page.getByTestId("fleet-row").evaluateAll((els) =>
    els.map((e) => ({
      id: e.getAttribute("data-handler") ?? "",
      state: e.getAttribute("data-state") ?? "",
      ratio: e.getAttribute("data-ratio") ? Number(e.getAttribute("data-ratio")) : null,
    })),
  );
}

beforeAll(async () => {
  exporter = await startFleetExporter(buildFleet({ services: 20, handlersPerService: 10 }));
  prom = await startOwnPrometheus({
    targets: [new URL(exporter.url).host],
    ruleFiles: [join(ROOT, "infra/prometheus/rules/dedup.yml")],
    intervalSec: 1,
  });
  app = await startApp({ env: { DEMO: "off", PROMETHEUS_URL: prom.url } });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await prom?.stop();
  await exporter?.close();
});

describe("fleet overview: 20 services × 10 handlers", () => {
  it("lists 200 rows worst first; the hot handlers lead once their alert is pending", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = collectErrors(page);
    // Until the duplicate-rate alert of both hot handlers is pending (rules are evaluated every
    // second) and the range holds two points of the ratio for a sparkline (the alert can be pending
    // before the second point exists, and refresh=off never refetches; 15 min has a 4 s step, the
    // default 1 h a 15 s one).
    await expect
      .poll(
        async () => {
          await page.goto(`${app.url}/?range=15m&refresh=off`);
          // Before Prometheus' first scrape the page has no handlers to list (and refresh=off keeps it so).
          if (
            !(await page
              .getByTestId("fleet-table")
              .waitFor({ timeout: 5_000 })
              .then(
                () => true,
                () => false,
              ))
          )
            return false;
          const r = await rows(page);
          const pending =
            r.length === 200 && HOT.every((h) => RANK[r.find((x) => x.id === h)?.state ?? "inactive"]! >= 1);
          return pending && (await page.locator('[data-testid="fleet-row"] [data-testid="sparkline"]').count()) > 0;
        },
        { timeout: 90_000, interval: 2_000 },
      )
      .toBe(true);
    const r = await rows(page);
    expect(r).toHaveLength(200);
    expect(new Set(r.map((x) => x.id)).size).toBe(200);
    expect(await page.getByTestId("fleet-count").textContent()).toBe("200");
    // Worst first: alert state, then ratio, for every adjacent pair.
    for (let i = 1; i < r.length; i++) {
      const a = r[i - 1]!;
      const b = r[i]!;
      expect(
        RANK[a.state]! > RANK[b.state]! || (RANK[a.state] === RANK[b.state] && (a.ratio ?? -1) >= (b.ratio ?? -1)),
        `${a.id} before ${b.id}`,
      ).toBe(true);
    }
    // The two 25 % handlers come first among the rows in their state or better-off ones.
    const hotRank = Math.min(...HOT.map((h) => RANK[r.find((x) => x.id === h)!.state]!));
    const fromHot = r.filter((x) => RANK[x.state]! <= hotRank);
    expect(
      fromHot
        .slice(0, 2)
        .map((x) => x.id)
        .sort(),
    ).toEqual([...HOT].sort());
    if (!r.some((x) => x.state === "firing"))
      expect(
        r
          .slice(0, 2)
          .map((x) => x.id)
          .sort(),
      ).toEqual([...HOT].sort());
    for (const h of HOT)
      expect(
        await page.locator(`[data-testid="fleet-row"][data-handler="${h}"] [data-testid="fleet-ratio"]`).textContent(),
      ).toMatch(/^2[45](\.\d+)?%$/);
    // The slow service's p99 and the failing service's errors are in their rows.
    expect(await page.locator('[data-testid="fleet-row"][data-handler="svc-07/h-01"]').textContent()).toMatch(
      /\d+(\.\d+)? ms/,
    );
    // Each hot row's sparkline ends above the 10 % line, drawn red.
    for (const h of HOT)
      expect(
        await page
          .locator(`[data-testid="fleet-row"][data-handler="${h}"] [data-testid="sparkline"] polyline`)
          .getAttribute("class"),
      ).toContain("text-red-600");
    await screenshot(page, "fleet-table");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("filter by service and search by handler land in the URL and survive a reload; a row opens the handler page", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors = collectErrors(page);
    await page.goto(`${app.url}/?refresh=off`);
    await page.getByTestId("fleet-table").waitFor();
    // The table comes painted by the server: use its controls once React has hydrated the page
    // (the status strip is drawn by the browser only).
    await page.getByTestId("mode").waitFor();
    await page.getByTestId("fleet-service").selectOption("svc-07");
    await expect.poll(() => page.getByTestId("fleet-row").count()).toBe(10);
    expect(new URL(page.url()).searchParams.get("service")).toBe("svc-07");
    expect((await rows(page)).every((x) => x.id.startsWith("svc-07/"))).toBe(true);
    await page.getByTestId("fleet-service").selectOption("");
    await page.getByTestId("fleet-search").fill("h-07");
    await expect.poll(() => page.getByTestId("fleet-row").count()).toBe(20);
    expect(new URL(page.url()).searchParams.get("q")).toBe("h-07");
    expect(new URL(page.url()).searchParams.get("service")).toBeNull();
    await page.getByTestId("fleet-sort").selectOption("name");
    await expect.poll(() => new URL(page.url()).searchParams.get("sort")).toBe("name");
    await expect.poll(async () => (await rows(page))[0]!.id).toBe("svc-01/h-07");
    await page.reload();
    await page.getByTestId("fleet-table").waitFor();
    await page.getByTestId("mode").waitFor();
    expect(await page.getByTestId("fleet-row").count()).toBe(20);
    expect(await page.getByTestId("fleet-search").inputValue()).toBe("h-07");
    expect(await page.getByTestId("fleet-sort").inputValue()).toBe("name");
    // A row (not only its link) opens the handler page, with the view's range kept.
    await page.locator('[data-testid="fleet-row"][data-handler="svc-11/h-07"] td').first().click();
    await page.waitForURL(/\/handlers\/svc-11\/h-07/);
    await expect
      .poll(() => page.getByTestId("stat-ratio").first().textContent(), { timeout: 20_000 })
      .toMatch(/2[45](\.\d+)?%/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("at 390 px the full alert names wrap instead of being cut", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const errors = collectErrors(page);
    await page.goto(`${app.url}/?refresh=off`);
    const cards = page.locator('[data-testid^="alert-Dedup"]');
    await cards.first().waitFor();
    expect(await cards.count()).toBe(ALERT_LIST.length);
    const names = await cards.evaluateAll((els) =>
      els.map((li) => {
        const el = li.querySelector("span[title]") as HTMLElement;
        return {
          text: el.textContent,
          title: el.getAttribute("title"),
          cut: el.scrollWidth > el.clientWidth + 1,
          overflows: el.getBoundingClientRect().right > li.getBoundingClientRect().right + 1,
        };
      }),
    );
    for (const n of names) {
      expect(n.text).toBe(n.title);
      expect(n.cut, `${n.title} is cut`).toBe(false);
      expect(n.overflows, `${n.title} overflows its card`).toBe(false);
    }
    // Nothing on the page is wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, "header-390px");
    expect(errors).toEqual([]);
    await page.close();
  });
});
