/**
 * Embedded mode as a first run sees it: the key browser lists the keys of
 * each demo handler from the in-memory store, a UUID just processed is found by the lookup, and with
 * no toggle touched the duplicate ratio moves above 0 and stays under the 1 % "normal" line within
 * the first minute. The message view and the DLQ page read the embedded broker: a key opens its
 * message, and the records the demo's failing handler poisoned are listed, previewed for a re-drive
 * and re-driven to the embedded topic. Saves test-results/screenshots/embedded-{key-browser,message,dlq}.png.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DlqResponse } from "@/lib/api/dlq";
import type { RecordsResponse } from "@/lib/api/records";
import type { HandlersResponse } from "@/lib/api/handlers";
import type { KeysResponse } from "@/lib/api/keys";
import type { OverviewResponse } from "@/lib/api/overview";
import { DEMO_HANDLER_SPECS } from "@/server/notification/demo-handlers";
import { collectErrors, launchBrowser, openMessageFromKey, screenshot, startApp, type App } from "./harness";

let app: App;
let browser: Browser;
let startedAt = 0;

beforeAll(async () => {
  app = await startApp();
  startedAt = Date.now(); // the app is up: its demo started a moment ago
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

const get = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${app.url}${path}`);
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return (await res.json()) as T;
};
const prefixOf = (h: string) => `notification:dedup:${h}`;

describe("embedded mode: keys and a background of duplicates", () => {
  it("within the first minute, no toggle touched: duplicate ratio > 0 and every handler < 1 %", async () => {
    let seen: Array<[string, number | null]> = [];
    let above = false;
    while (!above && Date.now() - startedAt < 65_000) {
      const o = await get<OverviewResponse>("/api/overview?range=15m");
      seen = o.handlers.map((h) => [h.handler, h.duplicateRatio.status === "ok" ? h.duplicateRatio.value : null]);
      for (const [h, v] of seen)
        expect(v ?? 0, `${h} after ${Math.round((Date.now() - startedAt) / 1000)} s`).toBeLessThan(0.01);
      above = seen.some(([, v]) => (v ?? 0) > 0);
      if (!above) await new Promise((r) => setTimeout(r, 2000));
    }
    expect(above, `no duplicate seen within the first minute: ${JSON.stringify(seen)}`).toBe(true);
    // The first minute of traffic, plus the local sampler's 5 s step.
    expect(Date.now() - startedAt).toBeLessThan(65_000);
  }, 90_000);

  it("the key browser lists keys of each demo handler; a UUID just processed is found", async () => {
    const h = await get<HandlersResponse>("/api/handlers?refresh=1");
    expect(h.storeKind).toBe("memory");
    for (const spec of DEMO_HANDLER_SPECS) {
      const page = await get<KeysResponse>(`/api/keys?prefix=${encodeURIComponent(prefixOf(spec.name))}&count=20`);
      expect(page.keys.length, spec.name).toBeGreaterThan(0);
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${app.url}/keys?refresh=off`);
    const tree = page.getByTestId("tree-handler");
    await tree.first().waitFor({ timeout: 20_000 });
    const names = await tree.allTextContents();
    for (const spec of DEMO_HANDLER_SPECS)
      expect(
        names.some((n) => n.includes(spec.name)),
        `${spec.name} in ${JSON.stringify(names)}`,
      ).toBe(true);
    await tree.filter({ hasText: "on-review-created" }).first().click();
    await page.getByTestId("key-row").first().waitFor({ timeout: 20_000 });
    const rows = await page.getByTestId("key-row").count();
    expect(rows).toBeGreaterThan(0);
    // A key just processed: the newest of the handler's keys right now.
    // Every key of the handler, a page (≤ 500, the API's limit) at a time in key order.
    const all: KeysResponse["keys"] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages === 0 || (cursor && pages < 50); pages++) {
      const qs: URLSearchParams = new URLSearchParams({
        prefix: prefixOf("on-review-created"),
        count: "500",
        ...(cursor ? { cursor } : {}),
      });
      const p: KeysResponse = await get<KeysResponse>(`/api/keys?${qs}`);
      all.push(...p.keys);
      cursor = p.cursor;
    }
    expect(cursor, "paged the whole handler within 50 pages").toBeNull();
    expect(all.every((k) => k.bytesEstimated === true)).toBe(true);
    const newest = all.filter((k) => k.state === "done").sort((a, b) => (b.ttlMs ?? 0) - (a.ttlMs ?? 0))[0]!;
    await page.getByTestId("lookup-input").fill(newest.uuid);
    await page.getByRole("button", { name: "Look up" }).click();
    const hit = page.getByTestId("key-lookup").getByTestId("key-row");
    await hit.first().waitFor({ timeout: 20_000 });
    expect(await hit.first().textContent()).toContain(newest.uuid);
    await screenshot(page, "embedded-key-browser");
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it("a key opens its message from the embedded broker; the DLQ page lists the demo's poisoned records, previews their re-drive and re-drives them", async () => {
    const prefix = prefixOf("on-review-created");
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(page);
    const { uuid, payload } = await openMessageFromKey(page, app.url, prefix);
    expect((await page.getByTestId("record-uuid").textContent())!.trim()).toBe(uuid);
    expect(await page.getByTestId("record-position").textContent()).toMatch(/^demo\.events \/ \d+ \/ \d+$/);
    expect(JSON.parse((await payload.getAttribute("data-raw"))!)).toMatchObject({ seq: expect.any(Number) });
    await screenshot(page, "embedded-message");

    // The handler fails every attempt for a moment: those messages go through their retries to the DLQ.
    const put = (body: unknown) =>
      fetch(`${app.url}/api/demo/sources`, {
        method: "PUT",
        headers: { "content-type": "application/json", origin: app.url },
        body: JSON.stringify(body),
      });
    expect((await put({ retryOnError: { enabled: true, rate: 1 } })).status).toBe(200);
    // Longer than a message's five attempts (4 retries, 0.2 → 1.6 s apart): the first ones fail them all.
    await new Promise((r) => setTimeout(r, 6000));
    expect((await put({ retryOnError: { enabled: false } })).status).toBe(200);
    let poisoned: DlqResponse["entries"] = [];
    for (
      const end = Date.now() + 30_000;
      poisoned.length === 0 && Date.now() < end;
      await new Promise((r) => setTimeout(r, 500))
    ) {
      poisoned = (await get<DlqResponse>("/api/dlq?reason=handler_error&limit=50")).entries;
    }
    expect(poisoned.length, "handler-error records in the embedded DLQ").toBeGreaterThan(0);
    expect(
      poisoned.every(
        (e) => e.topic === "demo.events.dlq" && e.topicPoisoned === "demo.events" && e.redrivable && e.uuid,
      ),
    ).toBe(true);
    await page.goto(`${app.url}/dlq?reason=handler_error`);
    const rows = page.getByTestId("dlq-records").getByTestId("dlq-row");
    await rows.first().waitFor({ timeout: 30_000 });
    expect(await rows.count()).toBeGreaterThanOrEqual(poisoned.length);
    expect(await page.getByTestId("dlq-records").textContent()).toContain(poisoned[0]!.uuid!);
    await page.getByTestId("redrive-dry").click();
    const result = page.getByTestId("redrive-result");
    await expect
      .poll(async () => (await result.textContent().catch(() => "")) ?? "", { timeout: 20_000 })
      .toMatch(/^Dry run: would re-drive \d+ of \d+ matched/);
    const n = Number(/would re-drive (\d+)/.exec((await result.textContent())!)![1]);
    const before = (await get<RecordsResponse>(`/api/records?topic=demo.events&uuid=${poisoned[0]!.uuid}`)) as Extract<
      RecordsResponse,
      { kind: "search" }
    >;
    await screenshot(page, "embedded-dlq");
    // The confirmed re-drive appends the records to the embedded topic again (same UUID).
    const dialog = new Promise<string>((resolve) =>
      page.once("dialog", (d) => (resolve(d.message()), void d.accept())),
    );
    await page.getByTestId("redrive-real").click();
    expect(await dialog).toContain(`Re-drive ${n} message`);
    await expect
      .poll(async () => (await result.textContent()) ?? "", { timeout: 20_000 })
      .toContain(`Re-drove ${n} of ${n} matched`);
    const after = (await get<RecordsResponse>(`/api/records?topic=demo.events&uuid=${poisoned[0]!.uuid}`)) as Extract<
      RecordsResponse,
      { kind: "search" }
    >;
    expect(after.records.length).toBe(before.records.length + 1);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});
