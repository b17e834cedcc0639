/**
 * The alerts page with a pending alert: the embedded app's demo store is made to
 * fail (PUT /api/demo/faults errorRate), `DedupRedisErrors` goes pending, and the page shows
 * "pending since …, fires in …" with a countdown that runs down between two answers, next to the
 * reason's own text. Saves test-results/screenshots/embedded-alerts-pending.png.
 */
import { describe, expect, it } from "vitest";
import type { AlertsResponse } from "@/lib/api/alerts";
import { ALERT_NAMES } from "@/lib/thresholds";
import { screenshot, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const app = appForTests();
const browser = browserForTests();

async function setErrorRate(errorRate: number): Promise<void> {
  const res = await fetch(`${app.url}/api/demo/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json", origin: app.url },
    body: JSON.stringify({ errorRate }),
  });
  if (!res.ok) throw new Error(`PUT /api/demo/faults → ${res.status}: ${await res.text()}`);
}

describe("alerts page: a pending alert's countdown", () => {
  it("DedupRedisErrors pending: 'pending since …, fires in …' counting down to activeAt + for", async () => {
    await setErrorRate(0.5);
    let pending: AlertsResponse | undefined;
    const deadline = Date.now() + 60_000;
    while (!pending && Date.now() < deadline) {
      const r = (await (await fetch(`${app.url}/api/alerts`)).json()) as AlertsResponse;
      const rule =
        r.alerts.status === "ok" ? r.alerts.rules.find((x) => x.alert === ALERT_NAMES.redisErrors) : undefined;
      if (rule?.instances.some((i) => i.state === "pending" && i.firesAt)) pending = r;
      else await new Promise((res) => setTimeout(res, 500));
    }
    expect(pending, "DedupRedisErrors did not go pending within 60 s of the store faults").toBeDefined();
    const rule =
      pending!.alerts.status === "ok"
        ? pending!.alerts.rules.find((x) => x.alert === ALERT_NAMES.redisErrors)!
        : undefined;
    const inst = rule!.instances.find((i) => i.state === "pending")!;
    // The API's arithmetic: fires at the first evaluation at or after activeAt + for (1 min).
    const dueAfter = Date.parse(inst.firesAt!) - Date.parse(inst.activeAt!);
    expect(dueAfter).toBeGreaterThanOrEqual(60_000);
    expect(dueAfter).toBeLessThan(60_000 + rule!.evaluationIntervalMs);

    await withPage(browser, { viewport: { width: 1280, height: 900 } }, async (page) => {
      await page.goto(`${app.url}/alerts?refresh=off`);
      const countdown = page.getByTestId(`rule-${ALERT_NAMES.redisErrors}`).getByTestId("alert-countdown").first();
      await countdown.waitFor({ timeout: 20_000 });
      const first = (await countdown.textContent()) ?? "";
      expect(first).toMatch(/^since (just now|\d+ s ago|1 min( \d+ s)? ago), fires in \d+ (s|min)/);
      // With refresh off the answer stays the same: the countdown still runs down.
      const seconds = (t: string) => {
        const m = /fires in (?:(\d+) min ?)?(?:(\d+) s)?/.exec(t);
        return Number(m?.[1] ?? 0) * 60 + Number(m?.[2] ?? 0);
      };
      await page.waitForTimeout(2_500);
      const later = (await countdown.textContent()) ?? "";
      expect(seconds(later)).toBeLessThan(seconds(first));
      await screenshot(page, "embedded-alerts-pending");
    });
    await setErrorRate(0);
  }, 120_000);
});
