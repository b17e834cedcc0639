import { describe, expect, it } from "vitest";
import { REAL_ENV, screenshot, startApp, withPage } from "./harness";
import { appForTests, browserForTests } from "./hooks";

const browser = browserForTests();

/** The home page at `url` names the mode (`strip`) and shows each component's health as `health`, with no console error. */
function homePageShows(url: string, strip: RegExp, health: string, shot: string): Promise<void> {
  return withPage(browser, {}, async (page) => {
    await page.goto(url);
    await page.getByTestId("mode").waitFor();
    expect(await page.getByTestId("mode").textContent()).toMatch(strip);
    for (const c of ["redis", "kafka", "prometheus"]) {
      await expect
        .poll(async () => page.getByTestId(`health-${c}`).textContent(), { timeout: 15_000 })
        .toContain(`${c}: ${health}`);
    }
    await screenshot(page, shot);
  });
}

describe("smoke: embedded mode (nothing configured)", () => {
  const app = appForTests();

  it("the home page shows the mode and the health of each component", () =>
    homePageShows(app.url, /Embedded mode/, "not-configured", "embedded-smoke-home"));
});

describe("smoke: real mode on the local stack", () => {
  // Port 3000: the one infra/prometheus/prometheus.yml scrapes. No demo: nothing it checks needs
  // traffic, and a demo would write keys and series under the shared stack's service name.
  const app = appForTests({ port: 3000, env: { ...REAL_ENV, DEMO: "off" } });

  it("the home page shows Redis, Kafka and Prometheus up", () =>
    homePageShows(app.url, /Real mode/, "up", "real-smoke-home"));

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
