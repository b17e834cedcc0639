/**
 * The handler page's "Declared setup" panel in the built app (embedded mode, no Kafka, no
 * Prometheus): a demo handler shows the TTL class and lease its consumer declares — its
 * `dedup_handler_info`, sampled from this process's registry, completed by its registration — and
 * says why its consumer group cannot be read; a handler nothing is known of says, part by part,
 * "unknown: declares no … : export dedup_handler_info" instead of a blank. Saves
 * test-results/screenshots/declared-setup.png.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launchBrowser, screenshot, startApp, withPage, type App } from "./harness";

let app: App;
let browser: Browser;

beforeAll(async () => {
  app = await startApp();
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("the Declared setup panel", () => {
  it("shows what a demo handler declares, and why its consumer group is not shown", () =>
    withPage(browser, {}, async (page) => {
      // Refreshed: right after start-up the registration answers until the local sampler has read the info.
      await page.goto(`${app.url}/handlers/notification/on-user-banned?refresh=5s`);
      const panel = page.getByTestId("handler-self");
      await panel.scrollIntoViewIfNeeded();
      await expect
        .poll(async () => panel.getByTestId("self-ttl").textContent(), { timeout: 20_000 })
        .toMatch(/critical \(declared: 7 d\)/);
      await expect
        .poll(async () => panel.getByTestId("self-declaration").textContent(), { timeout: 30_000 })
        .toMatch(/dedup_handler_info \(node, contract 1\)/);
      expect(await panel.getByTestId("self-lease").textContent()).toMatch(/lease/);
      expect(await panel.getByTestId("self-consumer-group").textContent()).toMatch(
        /unavailable: kafka: not configured/,
      );
      // The Now panel's class agrees with it.
      expect(await page.getByTestId("ttl-class").textContent()).toBe("critical");
      await screenshot(page, "declared-setup");
    }));

  it("a handler nothing is known of says, part by part, what is unknown and what to export", () =>
    withPage(browser, {}, async (page) => {
      await page.goto(`${app.url}/handlers/acme/ghost?refresh=off`);
      const panel = page.getByTestId("handler-self");
      await panel.scrollIntoViewIfNeeded();
      await expect
        .poll(async () => panel.getByTestId("self-declaration").textContent(), { timeout: 20_000 })
        .toMatch(/unknown: declares nothing: export dedup_handler_info/);
      for (const [id, what] of [
        ["self-ttl", "TTL"],
        ["self-lease", "lease"],
        ["self-marking", "marking"],
        ["self-stack", "stack"],
      ] as const) {
        expect(await panel.getByTestId(id).textContent(), id).toContain(
          `unknown: declares no ${what}: export dedup_handler_info`,
        );
      }
    }));
});
