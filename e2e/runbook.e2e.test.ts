/**
 * The runbook the app ships, served by the app (real Chromium, embedded mode): every alert's
 * runbook link — on the alerts page, on the handler page, in `/api/alerts` — is the app's own
 * `/runbook#<alertname in lower case>`, and following it lands on that alert's section of the
 * rendered RUNBOOK.md, with no console or CSP error; nothing needs a network beyond the app.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { AlertsResponse } from "@/lib/api/alerts";
import { ALERT_LIST } from "@/lib/thresholds";
import { collectErrors, screenshot, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const app = appForTests({ env: { DEMO_RATE: "20" } });
const browser = browserForTests();

beforeAll(async () => {
  // Failing store calls make DedupRedisErrors instances, which the handler page lists.
  const res = await fetch(`${app.url}/api/demo/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ errorRate: 0.05 }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
});

describe("runbook links land on the runbook the app serves", () => {
  it("GET /runbook is the rendered RUNBOOK.md with a section id for every alert", async () => {
    const res = await fetch(`${app.url}/runbook`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    const html = await res.text();
    for (const a of ALERT_LIST)
      expect(html, a.name).toMatch(new RegExp(`<h2 id="${a.runbookAnchor}"[^>]*>${a.name}</h2>`));
    expect(html).not.toContain("**What it means.**");
    const alerts = (await (await fetch(`${app.url}/api/alerts`)).json()) as AlertsResponse;
    expect(alerts.alerts.status).toBe("ok");
    if (alerts.alerts.status === "ok")
      for (const r of alerts.alerts.rules) expect(r.runbookUrl).toBe(`/runbook#${r.alert.toLowerCase()}`);
  });

  it("each alert's Runbook link on the alerts page opens its section in a new tab, scrolled into view", async () => {
    await withPage(browser, { viewport: { width: 1280, height: 800 } }, async (page) => {
      await page.goto(`${app.url}/alerts?refresh=off`);
      for (const a of ALERT_LIST) {
        const link = page.getByTestId(`rule-${a.name}`).getByTestId("rule-runbook");
        expect(await link.getAttribute("href")).toBe(`/runbook#${a.runbookAnchor}`);
        const [tab] = await Promise.all([page.waitForEvent("popup"), link.click()]);
        const tabErrors = collectErrors(tab);
        await tab.waitForLoadState();
        expect(tab.url()).toBe(`${app.url}/runbook#${a.runbookAnchor}`);
        const heading = tab.locator(`h2#${a.runbookAnchor}`);
        expect(await heading.textContent()).toBe(a.name);
        // Scrolled into view: the heading is laid out (a box) and near the top of the viewport.
        const top = async () => (await heading.boundingBox())?.y ?? null;
        await expect
          .poll(
            async () => {
              const y = await top();
              return y !== null && y >= 0 && y < 200;
            },
            { timeout: 10_000 },
          )
          .toBe(true);
        if (a === ALERT_LIST[0]) await screenshot(tab, "runbook-section");
        await tab.waitForTimeout(300);
        expect(tabErrors, a.name).toEqual([]);
        await tab.close();
      }
    });
  }, 120_000);

  it("the handler page links each alert instance to its runbook section", async () => {
    await withPage(browser, { viewport: { width: 1280, height: 800 } }, async (page) => {
      const links = page.getByTestId("handler-runbook");
      await expect
        .poll(
          async () => {
            await page.goto(`${app.url}/handlers/notification/on-review-created?refresh=off`);
            await page.getByTestId("handler-now").waitFor();
            return links.count();
          },
          { timeout: 90_000, interval: 3_000 },
        )
        .toBeGreaterThan(0);
      const hrefs = await links.evaluateAll((ls) => ls.map((l) => l.getAttribute("href")));
      const anchors = new Set(ALERT_LIST.map((a) => `/runbook#${a.runbookAnchor}`));
      for (const h of hrefs) expect(anchors).toContain(h);
      expect(hrefs).toContain("/runbook#deduprediserrors");
      await page.locator('[data-testid="handler-runbook"][href="/runbook#deduprediserrors"]').first().click();
      await page.waitForURL("**/runbook#deduprediserrors");
      expect(await page.locator("h2#deduprediserrors").textContent()).toBe("DedupRedisErrors");
    });
  }, 120_000);
});
