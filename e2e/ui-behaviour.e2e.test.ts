/**
 * The dashboard's behaviour over time in a real browser (Debian's Chromium), no timing bound: the
 * auto-refresh polls every 5 s and pauses in a hidden tab, a Prometheus that is down shows as
 * unavailable (never a blank or a zero line), and a workshop switch refused for want of the token
 * asks for it. The pages' rendering and paint times are e2e/ui.e2e.test.ts.
 */
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { collectErrors, REAL_ENV, screenshot, startApp, freePort } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const browser = browserForTests();

/** Hides or shows the tab of `page` as the browser would: react-query's focus manager follows visibilitychange. */
async function setTabHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((h) => {
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (h ? "hidden" : "visible") });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => h });
    document.dispatchEvent(new Event("visibilitychange"));
  }, hidden);
}

describe("UI: polling and upstream failure", () => {
  const app = appForTests();

  it("auto-refresh polls every 5 s and pauses while the tab is hidden", async () => {
    const page = await browser.newPage();
    const errors = collectErrors(page);
    const hits: number[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/overview")) hits.push(Date.now());
    });
    await page.goto(`${app.url}/?refresh=5s`);
    await page.getByTestId("alerts-panel").waitFor();
    const t0 = Date.now();
    await page.waitForTimeout(11_000);
    expect(hits.filter((t) => t > t0).length).toBeGreaterThanOrEqual(2);
    await setTabHidden(page, true);
    const t1 = Date.now();
    await page.waitForTimeout(11_000);
    expect(hits.filter((t) => t > t1).length).toBe(0);
    await setTabHidden(page, false);
    const t2 = Date.now();
    await expect.poll(() => hits.filter((t) => t > t2).length, { timeout: 7_000 }).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Prometheus down shows as 'Prometheus unavailable', never a blank or a zero line", async () => {
    const port = await freePort();
    const down = await startApp({
      port,
      env: {
        REDIS_URL: REAL_ENV.REDIS_URL,
        KAFKA_BROKERS: REAL_ENV.KAFKA_BROKERS,
        PROMETHEUS_URL: "http://127.0.0.1:1",
        DEMO: "off",
      },
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${down.url}/?refresh=off`);
      await expect
        .poll(() => page.getByTestId("alerts-panel").textContent(), { timeout: 20_000 })
        .toMatch(/Prometheus unavailable/);
      expect(await page.locator(".recharts-line").count()).toBe(0);
      // Nothing says "no traffic" or draws zeros: every duplicate-ratio panel (handlers found from
      // their Redis keys) or, without handlers, the handlers panel names the upstream that is down.
      await page.locator('[data-testid="handler-section"], [data-testid="handlers-empty"]').first().waitFor();
      const sections = await page.getByTestId("handler-section").count();
      if (sections === 0)
        expect(await page.getByTestId("handlers-empty").textContent()).toMatch(/Prometheus unavailable/);
      for (let i = 0; i < sections; i++) {
        const s = page.getByTestId("handler-section").nth(i);
        await expect
          .poll(
            () => s.locator('[data-testid="chart-duplicate-ratio"] [data-state]').first().getAttribute("data-state"),
            { timeout: 20_000 },
          )
          .toBe("error");
        expect(await s.locator('[data-testid="chart-duplicate-ratio"] [data-state="error"]').textContent()).toMatch(
          /Prometheus unavailable/,
        );
        expect(await s.getByTestId("stat-ratio").textContent()).toMatch(/Prometheus unavailable/);
      }
      await screenshot(page, "real-prometheus-down-overview");
      await page.goto(`${down.url}/alerts?refresh=off`);
      await expect
        .poll(() => page.locator("main").textContent(), { timeout: 20_000 })
        .toMatch(/Prometheus unavailable/);
      await screenshot(page, "real-prometheus-down-alerts");
      await page.close();
    } finally {
      await down.stop();
    }
  });
});

describe("UI: workshop token", () => {
  const token = `e2e-${randomBytes(8).toString("hex")}`;
  const app = appForTests({ env: { WORKSHOP_TOKEN: token } });

  it("a switch refused with 401 brings up the token field; with the token the switch and a run go through", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${app.url}/workshop?scenario=retry-on-error`);
    const retry = page.getByTestId("src-retry");
    await retry.waitFor();
    expect(await retry.getAttribute("aria-checked")).toBe("false");
    expect(await page.getByTestId("token-input").count()).toBe(0);
    await retry.click();
    await page.getByTestId("token-input").waitFor();
    expect(await page.getByTestId("demo-sources").textContent()).toMatch(/enter the workshop token/);
    expect(await retry.getAttribute("aria-checked")).toBe("false");
    await page.getByLabel(/requires the workshop token/).fill(token);
    await retry.click();
    await expect.poll(() => retry.getAttribute("aria-checked")).toBe("true");
    await page.getByTestId("run-button").click();
    await page.locator('[data-testid="run-status"][data-status="done"]').waitFor({ timeout: 60_000 });
    await screenshot(page, "embedded-workshop-token");
    // The only console errors are the browser's own notes of the refused request.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    expect(errors.length).toBeGreaterThan(0);
    await page.close();
  });
});
