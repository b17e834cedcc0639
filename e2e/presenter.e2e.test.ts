/**
 * What a workshop presenter sees at 1280×720 in embedded mode: a run at the narrated pace shows
 * its deliveries as they happen under provisional tiles, a live switch and its effect share one
 * screen and count from a marker the presenter can move, the tiles say why a figure looks odd, and
 * the overview's first screen holds the duplicate figures in type readable from the back of a room.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { screenshot, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const browser = browserForTests();
const app = appForTests({ port: 41517 });
const SCREEN = { viewport: { width: 1280, height: 720 } };

/** Whether `l` lies wholly inside the viewport of `page` as it is scrolled now. */
async function onScreen(page: Page, l: Locator): Promise<boolean> {
  const b = await l.boundingBox();
  const v = page.viewportSize()!;
  return b !== null && b.y >= 0 && b.y + b.height <= v.height && b.x >= 0 && b.x + b.width <= v.width;
}

const fontPx = (l: Locator) => l.evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
const num = async (l: Locator) => Number((await l.textContent())!.replace(/[^\d.]/g, ""));

describe("presenter at 1280×720", () => {
  it("a narrated run shows each delivery as it happens, its tiles marked provisional until it settles", async () => {
    await withPage(browser, SCREEN, async (page) => {
      await page.goto(`${app.url}/workshop?scenario=restart-before-commit&pace=narrated`);
      await page.getByTestId("pace-narrated").waitFor();
      expect(await page.getByTestId("pace-narrated").isChecked()).toBe(true);
      expect(await page.getByTestId("scenario-list").textContent()).toMatch(
        /Narrated pace \(one message every 0\.25 s.*\): each run stopped after at most 2 min/,
      );
      await page.getByTestId("run-button").click();
      const status = page.getByTestId("run-status");
      await expect.poll(() => status.getAttribute("data-status"), { timeout: 10_000 }).toBe("running");
      const lost = page.getByTestId("summary-lost");
      await expect.poll(() => num(page.getByTestId("summary-published").locator("dd").first())).toBeGreaterThan(0);
      // Mid-run: "Lost 60 / expected 0" read as a failure at 2 s; now it is provisional and says so.
      expect(await lost.getAttribute("data-provisional")).toBe("true");
      expect(await lost.textContent()).toMatch(/Not handled yet/);
      expect(await lost.textContent()).not.toMatch(/✗/);
      expect(await page.getByTestId("run-provisional").textContent()).toMatch(/Provisional/);
      const first = await num(page.getByTestId("summary-sideEffects").locator("dd").first());
      await page.waitForTimeout(2_000);
      expect(await status.getAttribute("data-status")).toBe("running");
      const rows = await page.getByTestId("timeline-row").count();
      expect(await num(page.getByTestId("summary-sideEffects").locator("dd").first())).toBeGreaterThan(first);
      await expect.poll(() => status.getAttribute("data-status"), { timeout: 120_000 }).toBe("done");
      expect(await page.getByTestId("timeline-row").count()).toBeGreaterThan(rows);
      expect(await page.getByTestId("run-outcome").getAttribute("data-met")).toBe("true");
      expect(await lost.getAttribute("data-provisional")).toBe("false");
      expect(await lost.textContent()).toMatch(/^Lost/);
    });
  }, 150_000);

  it("live switch (a) and its retries on one screen, counted from a marker the presenter moves", async () => {
    await withPage(browser, SCREEN, async (page) => {
      await page.goto(`${app.url}/workshop`);
      await page.getByTestId("to-live-demo").click();
      const retry = page.getByTestId("src-retry");
      const errors = page.getByTestId("effect-handler-errors");
      await errors.waitFor();
      expect(await onScreen(page, retry)).toBe(true);
      expect(await onScreen(page, errors)).toBe(true);
      expect(await fontPx(page.getByTestId("effect-handler-errors-value"))).toBeGreaterThanOrEqual(30);
      expect(await fontPx(page.locator("#src-retry-l"))).toBeGreaterThanOrEqual(18);
      await retry.click();
      await expect
        .poll(() => page.getByTestId("effects-since").textContent(), { timeout: 10_000 })
        .toMatch(/Retry on handler error.*switched on/);
      // 5 messages/s, a fifth of the attempts failing: the retries show within seconds.
      await expect
        .poll(() => num(page.getByTestId("effect-handler-errors-value")), { timeout: 30_000 })
        .toBeGreaterThanOrEqual(3);
      expect(await errors.textContent()).toMatch(/[1-9]\d* keys released for the next attempt/);
      await screenshot(page, "presenter-live-retry");
      const before = await num(page.getByTestId("effect-handler-errors-value"));
      await retry.click();
      await page.getByTestId("effects-restart").click();
      await expect
        .poll(() => page.getByTestId("effects-since").textContent(), { timeout: 10_000 })
        .toMatch(/when you started from now/);
      // A fresh start: the last demo's retries are not in the figures any more.
      await expect.poll(() => num(page.getByTestId("effect-handler-errors-value"))).toBeLessThan(before);
    });
  }, 90_000);

  it("the tiles say where a run's DLQ copies are and why Deduplicated exceeds Published", async () => {
    await withPage(browser, SCREEN, async (page) => {
      for (const name of ["redis-outage-fail-closed", "rebalance"]) {
        await page.goto(`${app.url}/workshop?scenario=${name}`);
        await page.getByTestId("run-button").click();
        await expect
          .poll(() => page.getByTestId("run-status").getAttribute("data-status"), { timeout: 90_000 })
          .toBe("done");
      }
      const dedup = page.getByTestId("summary-deduplicated");
      expect(await num(dedup.locator("dd").first())).toBeGreaterThan(120);
      expect(await page.getByTestId("note-deduplicated").textContent()).toMatch(
        /More than the 120 events: every swallowed copy counts/,
      );
      await page.goto(`${app.url}/workshop?scenario=redis-outage-fail-closed`);
      await page.getByTestId("note-dlq").waitFor({ timeout: 20_000 });
      expect(await page.getByTestId("note-dlq").textContent()).toMatch(
        /own DLQ topic workshop\.redis-outage-fail-closed\.\w+\.dlq .*not in the demo's DLQ the DLQ page lists/,
      );
    });
  }, 200_000);

  it("the overview's first screen holds the first handler's duplicate figures in large type, the calm alerts in one line", async () => {
    await withPage(browser, SCREEN, async (page) => {
      await page.goto(`${app.url}/?refresh=off`);
      const ratio = page.getByTestId("stat-ratio").first();
      await ratio.waitFor({ timeout: 30_000 });
      if ((await page.getByTestId("alerts-calm").count()) === 0)
        expect(await page.getByTestId("alerts-panel").textContent()).toMatch(/firing|pending/);
      expect(await onScreen(page, ratio)).toBe(true);
      expect(await fontPx(ratio.locator("div").nth(1))).toBeGreaterThanOrEqual(24);
      expect(await fontPx(ratio.locator("div").first())).toBeGreaterThanOrEqual(14);
      // The cards are still on the page, below the handlers.
      expect(await page.locator('[data-testid^="alert-Dedup"]').count()).toBeGreaterThan(0);
      await screenshot(page, "presenter-overview-1280");
    });
  }, 60_000);
});
