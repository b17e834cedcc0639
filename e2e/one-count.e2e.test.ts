/**
 * One key count per moment on every panel of a page (real Chromium, traffic running, panels
 * polling every 5 s): the overview's key tile of each handler and its row of the capacity table;
 * the handler page's tile, its key panel and its capacity row; the key browser's tree and the
 * header of the handler's key pages — each read from the page at one instant, many times while
 * the counts grow, always the same number. Embedded mode, and real mode on the local stack with a
 * service and a demo topic of its own.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectErrors, launchBrowser, ownDemoOnStack, screenshot, startApp, type App } from "./harness";

const HANDLERS = ["on-review-created", "on-user-banned", "on-page-viewed"];
/** How long each page is watched, and how often it is read. */
const WATCH_MS = 15_000;
const READ_EVERY_MS = 700;

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/** The first number of a text ("≈ 1,234 keys" → 1234), `null` without one. */
const num = (s: string | null | undefined) => {
  const m = /\d[\d,]*/.exec(s ?? "");
  return m ? Number(m[0].replaceAll(",", "")) : null;
};

/** Every key count on the page at this instant, by panel and handler (read in one script, so one DOM state). */
async function readCounts(page: Page): Promise<Record<string, string | null>> {
  return page.evaluate(() => {
    const out: Record<string, string | null> = {};
    for (const s of document.querySelectorAll<HTMLElement>('[data-testid="handler-section"]')) {
      out[`tile ${s.dataset.handler}`] =
        s.querySelector('[data-testid="stat-keys"] > div:nth-child(2)')?.textContent ?? null;
    }
    const tile = document.querySelector('[data-testid="handler-now"] [data-testid="stat-keys"] > div:nth-child(2)');
    if (tile) out["tile (handler page)"] = tile.textContent;
    for (const r of document.querySelectorAll('[data-testid="capacity-row"]')) {
      const cells = r.querySelectorAll("td");
      out[`capacity ${cells[0]?.textContent}`] = cells[1]?.firstChild?.textContent ?? null;
    }
    const at = document.querySelector('[data-testid="counted-at"]');
    if (at?.parentElement) out["key panel"] = at.parentElement.firstChild?.textContent ?? null;
    const tree = document.querySelector('[data-testid="tree-handler"][aria-current="true"] span:last-child');
    if (tree) out["tree"] = tree.textContent;
    const scanned = document.querySelector('[data-testid="scanned"]');
    if (scanned) out["key pages"] = / of ([^ ]+)/.exec(scanned.textContent ?? "")?.[1] ?? null;
    return out;
  });
}

/**
 * Watches `path` for {@link WATCH_MS}: every read, the counts of each handler agree across panels.
 * `group` maps a reading's name to the handler it is about. Returns the distinct counts seen.
 */
async function watch(page: Page, path: string, group: (name: string) => string, expected: string[]): Promise<number> {
  await page.goto(path);
  await page.getByTestId("mode").waitFor();
  await page.mouse.wheel(0, 20_000);
  await expect
    .poll(async () => Object.keys(await readCounts(page)).sort(), { timeout: 40_000 })
    .toEqual(expect.arrayContaining(expected));
  const seen = new Set<number>();
  // Ask for a recount every 10 s (the most the API allows) so the numbers move while they are read,
  // whatever the background count's own schedule.
  let recountAt = 0;
  for (const end = Date.now() + WATCH_MS; Date.now() < end; await page.waitForTimeout(READ_EVERY_MS)) {
    if (Date.now() - recountAt >= 10_000) {
      recountAt = Date.now();
      await fetch(new URL("/api/handlers?refresh=1", page.url()))
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
    }
    const counts = await readCounts(page);
    const byHandler = new Map<string, Map<string, number | null>>();
    for (const [name, text] of Object.entries(counts)) {
      const h = group(name);
      if (!byHandler.has(h)) byHandler.set(h, new Map());
      byHandler.get(h)!.set(name, num(text));
    }
    for (const [h, panels] of byHandler) {
      const values = [...panels.values()];
      expect(new Set(values).size, `${path}, ${h}: ${JSON.stringify(Object.fromEntries(panels))}`).toBe(1);
      if (values[0] !== null && values[0] !== undefined) seen.add(values[0]);
    }
  }
  return seen.size;
}

/** The overview, a handler page and the key browser of `service`, each watched while traffic runs. */
async function everyPage(app: App, service: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
  const errors = collectErrors(page);
  const handlerOf = (name: string) => HANDLERS.find((h) => name.includes(h)) ?? "the one handler";
  let changes = await watch(
    page,
    `${app.url}/?refresh=5s`,
    handlerOf,
    HANDLERS.flatMap((h) => [`tile ${service}/${h}`, `capacity ${service}:dedup:${h}`]),
  );
  await screenshot(page, `one-count-overview-${service}`);
  const handler = HANDLERS[0]!;
  changes += await watch(page, `${app.url}/handlers/${service}/${handler}?refresh=5s`, () => handler, [
    "tile (handler page)",
    "key panel",
    `capacity ${service}:dedup:${handler}`,
  ]);
  changes += await watch(
    page,
    `${app.url}/keys?refresh=5s&prefix=${encodeURIComponent(`${service}:dedup:${handler}`)}`,
    () => handler,
    ["tree", "key pages"],
  );
  await screenshot(page, `one-count-keys-${service}`);
  // The counts grew while the pages were watched: the agreement was tested on moving numbers.
  expect(changes).toBeGreaterThan(3);
  expect(errors).toEqual([]);
  await page.close();
}

describe("one key count per moment on every panel", () => {
  it("embedded mode: overview, handler page and key browser agree at every instant", async () => {
    const app = await startApp({ env: { DEMO_RATE: "30" } });
    try {
      await everyPage(app, "notification");
    } finally {
      await app.stop();
    }
  }, 240_000);

  it("real mode: overview, handler page and key browser agree at every instant", async () => {
    const own = ownDemoOnStack("onecount");
    const app = await startApp({
      env: { ...own.env, DEMO_RATE: "30", DEDUP_PREFIXES: `${own.tag}:dedup:*`, PROMETHEUS_URL: "" },
    });
    try {
      await everyPage(app, own.tag);
    } finally {
      await app.stop();
      await own.cleanup();
    }
  }, 300_000);
});
