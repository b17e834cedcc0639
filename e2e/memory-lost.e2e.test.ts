/**
 * A lost dedup memory on the page, in real Chromium: the app (DEMO=off) reads an own `redis-server`
 * without persistence holding 400 keys of one handler, and an own Prometheus (1 s scrape and
 * evaluation, the project's rules) scrapes its `/api/metrics`. Minute 0: the handler page counts
 * the 400 keys. Redis stopped: the key tile keeps 400 and says "stale since …". Redis started again,
 * empty, on the same port: the page says the memory was lost to a restart and that duplicates
 * within the window will run again, and `DedupMemoryLost` fires for that handler.
 * Saves test-results/screenshots/memory-lost-{stale,lost}.png.
 */
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { seedKeys } from "@/server/testing/seed-keys";
import { screenshot, until, withPage } from "./harness";
import { browserForTests } from "./hooks";
import { ownStackForTests } from "./own-stack";

const SERVICE = `e2e-mem-${randomBytes(4).toString("hex")}`;
const HANDLER = "on-order-paid";
const KEYS = 400;
const seed = async (url: string) => {
  const r = new Redis(url);
  await seedKeys(r, [
    { prefix: `${SERVICE}:dedup:${HANDLER}`, count: KEYS, ttlMs: 86_400_000, value: "done:demo.events:0:1" },
  ]);
  r.disconnect();
};
// Our own Redis, without persistence: stopping it removes every key the test wrote.
const stack = ownStackForTests({ service: SERVICE, env: { DEMO: "off" }, seed });
const browser = browserForTests();

const keyTile = (page: Page) => page.getByTestId("stat-keys").innerText();

describe("a lost dedup memory on the handler page", () => {
  it("counts the keys, marks them stale while Redis is down, then says the memory was lost to a restart and fires DedupMemoryLost", async () => {
    await withPage(browser, {}, async (page) => {
      await page.goto(`${stack.app.url}/handlers/${SERVICE}/${HANDLER}?refresh=5s`);
      await until("the 400 keys counted on the page", 60_000, async () => (await keyTile(page)).includes("400"));
      expect(await keyTile(page)).not.toContain("stale since");

      await stack.redis.stop();
      const stale = await until("the key tile marked stale", 60_000, async () => {
        const t = await keyTile(page);
        return t.includes("stale since") ? t : undefined;
      });
      expect(stale).toContain("400");
      expect(stale).toMatch(/stale since \d\d?:\d\d:\d\d.*Redis cannot be read; last count kept/);
      await screenshot(page, "memory-lost-stale");

      await stack.startRedisAgain();
      const note = await until("the lost memory on the page", 90_000, async () => {
        const t = await page.getByTestId("note-memory-lost").innerText({ timeout: 1000 });
        return t || undefined;
      });
      expect(note).toMatch(
        /^Dedup memory lost at \d\d?:\d\d:\d\d: 400 of 400 keys gone \(100(\.0)?%\) — Redis restarted; duplicates within the window will run again$/,
      );
      expect(await keyTile(page)).not.toContain("stale since");
      await until("DedupMemoryLost firing for the handler on the page", 90_000, async () => {
        const li = page.getByTestId("handler-now").locator("li", { hasText: "DedupMemoryLost" });
        return (
          (await li.count()) > 0 &&
          (await li.first().getByTestId("alert-state").getAttribute("data-state")) === "firing"
        );
      });
      await screenshot(page, "memory-lost-lost");
    });
  }, 300_000);
});
