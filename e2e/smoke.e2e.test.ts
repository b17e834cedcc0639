import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectErrors, launchBrowser, REAL_ENV, screenshot, startApp, type App } from "./harness";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe("smoke: embedded mode (nothing configured)", () => {
  let app: App;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => app?.stop());

  it("the home page shows the mode and the health of each component", async () => {
    const page = await browser.newPage();
    const errors = collectErrors(page);
    await page.goto(app.url);
    await page.getByTestId("mode").waitFor();
    expect(await page.getByTestId("mode").textContent()).toMatch(/Embedded mode/);
    for (const c of ["redis", "kafka", "prometheus"]) {
      expect(await page.getByTestId(`health-${c}`).textContent()).toContain(`${c}: not-configured`);
    }
    await screenshot(page, "embedded-smoke-home");
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("smoke: real mode on the local stack", () => {
  let app: App;
  beforeAll(async () => {
    // Port 3000: the one infra/prometheus/prometheus.yml scrapes. No demo: nothing it checks needs
    // traffic, and a demo would write keys and series under the shared stack's service name.
    app = await startApp({ port: 3000, env: { ...REAL_ENV, DEMO: "off" } });
  });
  afterAll(async () => app?.stop());

  it("the home page shows Redis, Kafka and Prometheus up", async () => {
    const page = await browser.newPage();
    const errors = collectErrors(page);
    await page.goto(app.url);
    await page.getByTestId("mode").waitFor();
    expect(await page.getByTestId("mode").textContent()).toMatch(/Real mode/);
    for (const c of ["redis", "kafka", "prometheus"]) {
      await expect.poll(async () => page.getByTestId(`health-${c}`).textContent(), { timeout: 15_000 }).toContain(`${c}: up`);
    }
    await screenshot(page, "real-smoke-home");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Prometheus reports the app's scrape target up while the app runs", async () => {
    await expect
      .poll(
        async () => {
          const res = await fetch("http://127.0.0.1:9090/api/v1/targets?state=active");
          const body = (await res.json()) as { data: { activeTargets: { scrapeUrl: string; health: string }[] } };
          return body.data.activeTargets.find((t) => t.scrapeUrl === "http://127.0.0.1:3000/api/metrics")?.health;
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toBe("up");
  });

  it("/api/health answers within its bound even for a component that is down", async () => {
    // A second app pointed at closed ports: each probe must give up, and the route must still answer.
    const down = await startApp({
      env: { REDIS_URL: "redis://127.0.0.1:1", KAFKA_BROKERS: "127.0.0.1:1", PROMETHEUS_URL: "http://127.0.0.1:1" },
    }).catch((e: unknown) => {
      throw e;
    });
    try {
      const t0 = Date.now();
      const res = await fetch(`${down.url}/api/health`);
      const h = (await res.json()) as { mode: string; components: Record<string, { status: string }> };
      expect(Date.now() - t0).toBeLessThan(4_000);
      expect(h.mode).toBe("real");
      expect(Object.values(h.components).map((c) => c.status)).toEqual(["down", "down", "down"]);
    } finally {
      await down.stop();
    }
  });
});
