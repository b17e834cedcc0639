/**
 * The key page's forget, bound to its dry run, in Chromium at a 6× throttled CPU (the form is
 * painted by the server well before React hydrates it): State and Idle chosen the moment the form
 * is on screen are kept (the controls take no choice before hydration: they are disabled until
 * then); nothing is selected until a state is chosen; the dry run lists the keys it matched; the
 * confirmation restates the selection in words and names the dry run's time; the confirmed forget
 * deletes exactly the keys the dry run listed, no other (redis-cli agrees), skips one whose value changed
 * meanwhile and leaves a key written after the dry run. Its own service name and key prefix on the
 * shared Redis. Saves test-results/screenshots/key-actions-bound.png.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REAL_ENV, screenshot, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const service = `e2e-bound-${randomBytes(4).toString("hex")}`;
const handler = "on-review-created";
const prefix = `${service}:dedup:${handler}`;
/** 17 done keys with a position, 3 with the design note's plain `1`: all done. */
const doneKeys = Array.from({ length: 20 }, (_, i) => `${prefix}:d${String(i).padStart(2, "0")}`);
/** Leases of an owner nobody can vouch for: never selected by a `done` forget. */
const leaseKeys = Array.from({ length: 4 }, (_, i) => `${prefix}:l${i}`);
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(REAL_ENV.REDIS_URL);
  for (const [i, k] of doneKeys.entries())
    await redis.set(k, i < 17 ? `done:${service}.events:0:${i}` : "1", "PX", 600_000);
  for (const [i, k] of leaseKeys.entries()) await redis.set(k, `processing:ghost-1/AbCdEfGh${i}`, "PX", 600_000);
});

afterAll(async () => {
  const keys = await redis.keys(`${service}:*`);
  if (keys.length) await redis.unlink(...keys);
  redis.disconnect();
});

const app = appForTests({
  env: { REDIS_URL: REAL_ENV.REDIS_URL, SERVICE_NAME: service, DEMO: "off", DEDUP_PREFIXES: `${service}:dedup:*` },
});
const browser = browserForTests();

describe("the key page's forget acts on what its dry run listed (Chromium, CPU throttled 6×)", () => {
  it("choices made at first sight are kept; the dialog restates the selection; exactly the listed keys are deleted, a changed one skipped", async () => {
    let listed: string[] = [];
    await withPage(browser, { viewport: { width: 1280, height: 1000 } }, async (page) => {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: 6 });
      await page.goto(`${app.url}/keys?prefix=${encodeURIComponent(prefix)}&refresh=off`, { waitUntil: "commit" });
      const state = page.getByTestId("action-state");
      const idle = page.getByTestId("action-idle");
      await state.waitFor({ state: "attached", timeout: 60_000 });
      // The server's paint: the controls take no choice that hydration would drop.
      const firstSight = await state.evaluate((el) => (el as HTMLSelectElement).disabled);
      expect(firstSight, "the State control is disabled before hydration").toBe(true);
      expect(await page.getByTestId("action-dry").isDisabled()).toBe(true);
      // A person choosing at once: Playwright acts as soon as the control takes input.
      await state.selectOption("done");
      await idle.fill("0.01");
      // Long after hydration the choices are still there, and they are what the dry run uses.
      await page.waitForTimeout(3000);
      expect(await state.inputValue()).toBe("done");
      expect(await idle.inputValue()).toBe("0.01");
      await page.getByTestId("action-dry").click();
      const result = page.getByTestId("action-result");
      await expect
        .poll(async () => (await result.textContent().catch(() => "")) ?? "", { timeout: 60_000 })
        .toMatch(/^Dry run: \d+ keys match \(in state done, idle ≥ 0\.6 s\) at \d\d:\d\d:\d\d/);
      // The app's own key sampling reads keys (which resets their idle time), so a few done keys may
      // be too fresh: what matters is that the list is done keys only and what is deleted is the list.
      listed = (
        await page.getByTestId("action-key").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key")!))
      ).sort();
      const text = (await result.textContent())!;
      const n = listed.length;
      expect(text).toMatch(new RegExp(`^Dry run: ${n} keys match`));
      expect(n).toBeGreaterThanOrEqual(10);
      expect(listed.every((k) => doneKeys.includes(k))).toBe(true);
      const at = /at (\d\d:\d\d:\d\d)/.exec(text)![1]!;

      // Meanwhile a consumer takes one listed key again, and processes a new message.
      await redis.set(listed[0]!, "processing:host-x-1/ZzZzZzZz0", "PX", 600_000);
      await redis.set(`${prefix}:late`, "done", "PX", 600_000);
      const dialog = new Promise<string>((resolve) =>
        page.once("dialog", (d) => (resolve(d.message()), void d.accept())),
      );
      await page.getByTestId("action-real").click();
      expect(await dialog).toBe(
        `Delete ${n} keys of ${prefix} in state done, idle ≥ 0.6 s, as listed by the dry run at ${at}?`,
      );
      await expect
        .poll(async () => (await result.textContent()) ?? "", { timeout: 60_000 })
        .toContain(`${n - 1} of ${n} keys deleted, 1 skipped (changed since the dry run)`);
      await screenshot(page, "key-actions-bound");
    });
    const cli = async (...keys: string[]) =>
      Number((await promisify(execFile)("redis-cli", ["-u", REAL_ENV.REDIS_URL, "EXISTS", ...keys])).stdout.trim());
    expect(await cli(...listed.slice(1))).toBe(0);
    expect(await redis.get(listed[0]!)).toBe("processing:host-x-1/ZzZzZzZz0");
    const unlisted = doneKeys.filter((k) => !listed.includes(k));
    if (unlisted.length) expect(await cli(...unlisted)).toBe(unlisted.length);
    expect(await redis.get(`${prefix}:late`)).toBe("done");
    expect(await cli(...leaseKeys)).toBe(4);
  }, 180_000);
});
