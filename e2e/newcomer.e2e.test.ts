/**
 * What a newcomer and a presenter meet on one embedded app (real Chromium): the words follow the
 * store (no "Redis" where there is none), the key lookup takes what `redis-cli --scan` prints and
 * any-case ULIDs and refuses what is not an id, an out-of-range fault value is refused with its
 * range, the alerts page fits 390 px and the handler page tells alert instances apart, the
 * workshop's Run shows "Running…" at once, never after the run, with the result on screen at
 * 1280×720, and chart legends keep whole series names at 1440 px.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeysResponse } from "@/lib/api/keys";
import type { ScenarioList } from "@/lib/api/workshop";
import { collectErrors, launchBrowser, screenshot, startApp, type App } from "./harness";

let app: App;
let browser: Browser;
const HANDLER = "on-review-created";
const PREFIX = `notification:dedup:${HANDLER}`;

const json = { "content-type": "application/json" };

beforeAll(async () => {
  app = await startApp({ env: { DEMO_RATE: "40" } });
  browser = await launchBrowser();
  // Failing store calls: the error panels, the legend's reason names and DedupRedisErrors instances.
  const res = await fetch(`${app.url}/api/demo/faults`, {
    method: "PUT",
    headers: json,
    body: JSON.stringify({ errorRate: 0.05 }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function open(path: string, width: number, height: number): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width, height } });
  const errors = collectErrors(page);
  await page.goto(`${app.url}${path}`);
  return { page, errors };
}

/** A key of the handler, as the key browser's API (and `redis-cli --scan`) names it. */
async function someKey(): Promise<string> {
  for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
    const page = (await (
      await fetch(`${app.url}/api/keys?prefix=${encodeURIComponent(PREFIX)}&count=5`)
    ).json()) as KeysResponse;
    const k = page.keys.find((x) => x.state === "done");
    if (k) return k.key;
  }
  throw new Error(`no done key under ${PREFIX} within 20 s`);
}

describe("a newcomer's first pages (embedded mode)", () => {
  it("no panel speaks of Redis: the words follow the in-memory store", async () => {
    for (const path of ["/?refresh=off", `/handlers/notification/${HANDLER}?refresh=off`, "/keys?refresh=off"]) {
      const { page, errors } = await open(path, 1280, 900);
      await page.getByTestId("mode").waitFor();
      await page
        .waitForFunction(() => !document.body.innerText.includes("Loading"), undefined, { timeout: 30_000 })
        .catch(() => undefined);
      // Mount the deferred panels below the fold.
      await page.mouse.wheel(0, 5_000);
      await page.waitForTimeout(1_500);
      const text = await page.evaluate(() => document.body.innerText);
      for (const phrase of ["Redis check", "in Redis", "oldest key in Redis", "found in Redis"])
        expect(text, `${path}: "${phrase}"`).not.toContain(phrase);
      expect(errors, path).toEqual([]);
      await page.close();
    }
  }, 120_000);

  it("key lookup: a whole key as redis-cli --scan prints it and a lower-case ULID are found; not-a-uuid is refused with the expected forms", async () => {
    const key = await someKey();
    const ulid = key.slice(PREFIX.length + 1);
    const api = await fetch(`${app.url}/api/keys/lookup?uuid=not-a-uuid`);
    expect(api.status).toBe(400);
    expect(await api.json()).toMatchObject({
      error: expect.any(String),
      detail: expect.stringMatching(/expected a ULID .*UUID.*whole key/),
    });

    const { page, errors } = await open("/keys?refresh=off", 1280, 900);
    const input = page.getByTestId("lookup-input");
    for (const typed of [key, ulid.toLowerCase()]) {
      await input.fill(typed);
      await input.press("Enter");
      // Found: the result table names the handler's key (a miss says "No key for …").
      await expect
        .poll(
          () =>
            page
              .getByTestId("key-lookup")
              .locator("table")
              .innerText()
              .catch(() => ""),
          { timeout: 15_000 },
        )
        .toContain(ulid);
      expect(await page.getByTestId("key-lookup").innerText()).not.toContain("No key for");
    }
    await input.fill("not-a-uuid");
    await input.press("Enter");
    await expect
      .poll(() => page.getByTestId("lookup-invalid").textContent(), { timeout: 5_000 })
      .toMatch(/"not-a-uuid" is not a message id: expected a ULID/);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("an out-of-range fault value is refused with its range (the form and the API), the fault unchanged", async () => {
    const put = await fetch(`${app.url}/api/demo/faults`, {
      method: "PUT",
      headers: json,
      body: JSON.stringify({ latencyMs: 3000 }),
    });
    expect(put.status).toBe(400);
    expect(await put.json()).toMatchObject({
      error: expect.any(String),
      detail: expect.stringContaining("latencyMs must be 0–2000 ms"),
    });

    const { page, errors } = await open("/workshop", 1280, 900);
    const field = page.getByTestId("fault-latency");
    await field.fill("3000");
    await field.press("Enter");
    await expect
      .poll(() => page.getByTestId("fault-latency-error").textContent(), { timeout: 5_000 })
      .toContain("3000 is outside 0–2000 ms; not applied");
    expect(await field.inputValue()).toBe("3000");
    const faults = (await (await fetch(`${app.url}/api/demo/faults`)).json()) as { latencyMs: number };
    expect(faults.latencyMs).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("alerts at 390 px: the page is no wider than the screen; the handler page tells DedupRedisErrors instances apart by reason", async () => {
    const { page, errors } = await open(`/handlers/notification/${HANDLER}?refresh=5s`, 1280, 900);
    await expect
      .poll(
        () =>
          page
            .getByTestId("alert-own-labels")
            .first()
            .textContent()
            .catch(() => ""),
        { timeout: 60_000, interval: 1_000 },
      )
      .toMatch(/reason="redis_conn"/);
    await page.close();
    const narrow = await open("/alerts?refresh=off", 390, 844);
    await narrow.page.getByTestId("rule-DedupRedisErrors").waitFor();
    await narrow.page.waitForTimeout(500);
    expect(await narrow.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(narrow.page, "newcomer-alerts-390");
    expect([...errors, ...narrow.errors]).toEqual([]);
    await narrow.page.close();
  }, 90_000);

  it("chart legends at 1440 px show whole series names", async () => {
    const { page, errors } = await open("/?refresh=off&range=15m", 1440, 900);
    await page.mouse.wheel(0, 3_000);
    const names = page.getByTestId("legend-name");
    await expect.poll(() => names.count(), { timeout: 30_000 }).toBeGreaterThan(0);
    const cut = await names.evaluateAll((tds) =>
      tds.filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => td.textContent),
    );
    expect(cut).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("workshop at 1280×720: Run shows Running… at once, the result tiles are on screen, and the button is free again after the run", async () => {
    const list = (await (await fetch(`${app.url}/api/workshop/scenarios`)).json()) as ScenarioList;
    const quick = [...list.scenarios].sort((a, b) => a.maxDurationMs - b.maxDurationMs)[0]!;
    const { page, errors } = await open(`/workshop?scenario=${quick.name}`, 1280, 720);
    const button = page.getByTestId("run-button");
    await button.waitFor();
    await button.click();
    // At once: within one frame of React's update, not after the next list refetch.
    await expect.poll(() => button.textContent(), { timeout: 400, interval: 50 }).toBe("Running…");
    await page.locator('[data-testid="run-status"][data-status="done"]').waitFor({ timeout: 120_000 });
    await expect.poll(() => button.textContent(), { timeout: 2_000 }).toBe("Run scenario");
    const tile = await page.locator('[data-testid^="summary-"]').first().boundingBox();
    expect(tile).not.toBeNull();
    expect(tile!.y).toBeGreaterThanOrEqual(0);
    expect(tile!.y + tile!.height).toBeLessThanOrEqual(720);
    await screenshot(page, "newcomer-workshop-1280x720");
    expect(errors).toEqual([]);
    await page.close();
  }, 150_000);
});
