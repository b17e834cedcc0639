/**
 * The crash-storm scenario on the workshop page, embedded mode without PostgreSQL: one tile per
 * guarantee — Redis dedup with the side effects it performed twice (measured, above 0), the
 * PostgreSQL inbox and Kafka transactions saying why they did not run instead of showing 0 — and
 * "As expected" computed from what was measured. Saves test-results/screenshots/crash-storm.png.
 */
import { describe, expect, it } from "vitest";
import { collectErrors, screenshot } from "./harness";
import { appForTests, browserForTests } from "./hooks";

/** Inside the range this engineer's servers may use on the shared machine. */
const PORT = 41_310;
const app = appForTests({ port: PORT });
const browser = browserForTests();

describe("workshop: crash storm, three guarantees", () => {
  it("shows Redis dedup's duplicates as measured and 'not run: <reason>' for the guarantees embedded mode cannot run", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = collectErrors(page);
    await page.goto(`${app.url}/workshop?scenario=crash-storm-guarantees`);
    const expected = page.getByTestId("expected");
    await expected.waitFor({ timeout: 30_000 });
    expect(await expected.textContent()).toContain("Redis dedup: Duplicate side effects > 0");
    await page.getByTestId("run-button").click();
    await page.locator('[data-testid="run-status"][data-status="done"]').waitFor({ timeout: 90_000 });

    const tile = (g: string) => page.getByTestId(`guarantee-${g}`);
    expect(await tile("redis").getAttribute("data-status")).toBe("measured");
    const twice = Number((await page.getByTestId("guarantee-redis-duplicates").textContent())!.replace(/,/g, ""));
    expect(twice).toBeGreaterThan(0);
    expect(await tile("redis").textContent()).toContain("3 crashes");
    expect(await page.getByTestId("guarantee-inbox-duplicates").textContent()).toBe(
      "not run: no PostgreSQL configured (set DATABASE_URL)",
    );
    expect(await page.getByTestId("guarantee-transactions-duplicates").textContent()).toMatch(
      /^not run: the embedded broker has no Kafka transactions/,
    );
    expect(await tile("inbox").textContent()).toContain("not evaluated");
    expect(await page.getByTestId("run-outcome").getAttribute("data-met")).toBe("true");
    await screenshot(page, "crash-storm");
    expect(errors).toEqual([]);
    await page.close();
  }, 150_000);
});
