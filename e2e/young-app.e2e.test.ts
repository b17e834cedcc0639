/**
 * What an on-call engineer reads on a freshly started app (real Chromium): in embedded mode the
 * exposition marks the demo's series as the demo's and the tiles name their windows and buckets; in
 * real mode (an app of its own on its own Redis and Prometheus) the figures say that their window
 * still reaches before the app's start, and the key tile does not keep a start-up count of 0 keys
 * beside a flowing handler for the inspector's minute.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, screenshot, startApp, until, withPage, type App } from "./harness";
import { ownStackForTests } from "./own-stack";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** The value and the hint of a tile of the first handler section showing `testId`. */
const tile = (page: Page, testId: string) =>
  page.evaluate((id) => {
    const t = document.querySelector(`[data-testid="handler-section"] [data-testid="${id}"]`);
    return t ? [...t.children].map((c) => c.textContent ?? "") : null;
  }, testId);

describe("embedded mode", () => {
  let app: App;
  beforeAll(async () => {
    app = await startApp({ port: 41410 });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
  });

  it('exports every series marked app_mode="embedded", and the tiles name the 5-min window, failed messages and the p99\'s bucket', async () => {
    const text = await until("the demo's counters on /api/metrics", 30_000, async () => {
      const t = await (await fetch(`${app.url}/api/metrics`)).text();
      return t.includes("messages_processed_total{") ? t : null;
    });
    const unmarked = text
      .split("\n")
      .filter((l) => l && !l.startsWith("#") && !/^[a-zA-Z_:][a-zA-Z0-9_:]*\{app_mode="embedded"/.test(l));
    expect(unmarked).toEqual([]);
    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      await page.goto(`${app.url}/?refresh=5s`);
      const p99 = await until("a check p99 with its bucket", 45_000, async () => {
        const t = await tile(page, "stat-p99");
        return t && /\(bucket [\d.,]+–[\d.,]+ m?s\)/.test(t[1] ?? "") ? t : null;
      });
      expect(p99[1]).toMatch(/^[\d.,]+ m?s \(bucket /);
      const rate = (await tile(page, "stat-rate"))!;
      expect(rate[0]).toBe("Processed (5 min)");
      expect(rate[2]).toMatch(/msg\/s deduplicated, [\d.]+ msg\/s failed \(to the DLQ or redelivered\)/);
      expect(rate[2]).not.toMatch(/errors/);
      await screenshot(page, "young-app-embedded-tiles");
    });
  }, 120_000);
});

describe("real mode, just started", () => {
  const stack = ownStackForTests({ service: `young-${Math.random().toString(36).slice(2, 6)}` });

  it("says the 5-min figures reach before the app's start, and every key tile leaves a start-up count of 0 within 25 s of traffic", async () => {
    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      await page.goto(`${stack.app.url}/?refresh=5s`);
      const note = await until("the before-start note", 45_000, async () =>
        page
          .getByTestId("before-start")
          .first()
          .textContent({ timeout: 1_000 })
          .catch(() => null),
      );
      expect(note).toMatch(
        /^This app started .+ ago \(at \d\d:\d\d:\d\d\): the 5 min figures and alerts still include .+ from before it/,
      );
      // Traffic seen on the page: from then, a tile of 0 keys may stand at most 25 s.
      await until("processed messages on the page", 45_000, async () => {
        const r = await tile(page, "stat-rate");
        return r && /^[1-9]|^0\.\d*[1-9]/.test(r[1] ?? "") ? r : null;
      });
      // Every handler's tile: the start-up count held 0 keys for some of them and stood for a minute.
      const keys = await until("a key count above 0 on every handler's tile", 25_000, async () => {
        const all = await page.evaluate(() =>
          [
            ...document.querySelectorAll(
              '[data-testid="handler-section"] [data-testid="stat-keys"] > div:nth-child(2)',
            ),
          ].map((d) => d.textContent ?? ""),
        );
        return all.length === 3 && all.every((k) => /[1-9]/.test(k)) ? all : null;
      });
      expect(keys).toHaveLength(3);
      await screenshot(page, "young-app-real-before-start");
    });
  }, 150_000);
});
