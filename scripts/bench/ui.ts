/**
 * `npx tsx scripts/bench/ui.ts [--dir <built app>] [--loads 5] [--port 3000] [--json out.json]` — time to data
 * painted (issue 15: `ui.overview_data_painted_ms`, `ui.handler_data_painted_ms`, goal ≤ 1,000 ms):
 * `next start` of a built app (default: this checkout's .next; `npm run bench`'s ui step passes its
 * temp build of HEAD) in real mode on the live stack (Redis, Kafka, Prometheus of
 * `npm run stack:up`, which scrapes the app on port 3000: run it when nothing else holds that
 * port, e.g. under the e2e lock), the demo's traffic with a 5 % forwarder re-publish so every chart has a line,
 * then `--loads` cold loads (a fresh browser context each: empty cache) of `/` and of the busiest
 * handler's page in headless Chromium. Painted = the first handler's duplicate ratio number AND the
 * duplicate-ratio chart's line are on screen (ms since navigation start): the server's drawing of
 * the line counts (it is the data, in the HTML); when recharts' interactive chart replaced it is
 * reported beside (`interactiveMedianMs`). One warm-up load of each
 * page is not counted (the server's first render compiles its code paths). The median is reported
 * with every load and the 1-minute load average beside it.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { launchBrowser, REAL_ENV } from "../../e2e/harness";
import { arg } from "../lib/args";
import { runMain } from "../lib/run";
import { median } from "../lib/stats";

const DIR = arg("dir", process.cwd());
const LOADS = Number(arg("loads", "5"));
const JSON_OUT = arg("json", "");
/** The local Prometheus (infra/prometheus/prometheus.yml) scrapes the app at 127.0.0.1:3000. */
const PORT = Number(arg("port", "3000"));
if (!(Number.isInteger(LOADS) && LOADS >= 1 && LOADS <= 20))
  throw new RangeError("bench-ui: --loads must be an integer in [1, 20]");
if (!existsSync(join(DIR, ".next", "BUILD_ID")))
  throw new Error(`bench-ui: no build in ${DIR}/.next (run next build there first)`);

/**
 * The page shows data: a duplicate ratio figure and a drawn duplicate-ratio line — the server's
 * drawing of the prefetched series (components/charts/static-chart.tsx) or recharts' line.
 */
const LINE = '[data-testid="chart-duplicate-ratio"] :is([data-static-line], .recharts-line)';
/** The interactive chart (recharts, tooltips) has replaced the server's drawing: reported beside. */
const INTERACTIVE = '[data-testid="chart-duplicate-ratio"] .recharts-line';
const RATIO = '[data-testid="stat-ratio"]';

async function startApp(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = PORT;
  const env: NodeJS.ProcessEnv = { ...process.env, ...REAL_ENV, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" };
  delete env.WORKSHOP_TOKEN;
  const child = spawn(join(DIR, "node_modules", ".bin", "next"), ["start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: DIR,
    env,
    stdio: "ignore",
    detached: true,
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || !child.pid) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    process.kill(-child.pid, "SIGTERM");
    await exited;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5_000) })).ok) return { url, stop };
    } catch {
      /* starting */
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error("bench-ui: the app did not answer /api/health within 60 s");
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Turns the demo's traffic on with a re-publishing forwarder; the busiest handler once it has a ratio series. */
async function drive(url: string): Promise<string> {
  const put = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`PUT ${path} answered ${res.status}: ${await res.text()}`);
  };
  await put("/api/demo/sources", { traffic: { enabled: true }, forwarderRepublish: { enabled: true, rate: 0.05 } });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const s = (await (await fetch(`${url}/api/series?metric=duplicate_ratio&range=1h`)).json()) as {
      data: {
        status: string;
        series?: Array<{ labels: Record<string, string>; points: Array<[number, number | null]> }>;
      };
    };
    const line = s.data.series?.find((l) => l.points.filter((p) => p[1] !== null).length >= 2);
    if (line)
      return `/handlers/${encodeURIComponent(line.labels.service!)}/${encodeURIComponent(line.labels.handler!)}`;
    if (Date.now() > deadline) throw new Error("bench-ui: no duplicate-ratio series within 90 s of demo traffic");
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** One cold load of `path`: ms until the ratio number and the ratio line are painted, and until the number alone. */
async function coldLoad(
  browser: Browser,
  url: string,
): Promise<{ paintedMs: number; firstNumberMs: number; interactiveMs: number }> {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await ctx.newPage();
  // A string, not a function: tsx keeps function names with a helper the page does not have.
  await page.addInitScript(`(() => {
    const w = window;
    const check = () => {
      const n = [...document.querySelectorAll(${JSON.stringify(RATIO)})].some((e) => /\\d%/.test(e.textContent || ""));
      if (w.__number === undefined && n) w.__number = performance.now();
      if (w.__painted === undefined && w.__number !== undefined && document.querySelector(${JSON.stringify(LINE)})) w.__painted = performance.now();
      if (w.__interactive === undefined && document.querySelector(${JSON.stringify(INTERACTIVE)})) w.__interactive = performance.now();
    };
    new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
    document.addEventListener("DOMContentLoaded", check);
  })();`);
  await page.goto(url);
  try {
    // Polled from here: waitForFunction evaluates inside the page, which the page's CSP forbids.
    const end = Date.now() + 30_000;
    while ((await page.evaluate("window.__painted === undefined || window.__interactive === undefined")) === true) {
      if (Date.now() > end) throw new Error("timeout 30 s");
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await page.screenshot({ path: "/tmp/bench-ui-timeout.png", fullPage: true });
    const seen = await page.evaluate(
      `({ ratios: [...document.querySelectorAll(${JSON.stringify(RATIO)})].map((x) => x.textContent), lines: document.querySelectorAll(${JSON.stringify(LINE)}).length })`,
    );
    throw new Error(
      `${url}: data not painted within 30 s (${JSON.stringify(seen)}; screenshot /tmp/bench-ui-timeout.png): ${(e as Error).message}`,
    );
  }
  const r = (await page.evaluate(
    "({ paintedMs: Math.round(window.__painted), firstNumberMs: Math.round(window.__number), interactiveMs: Math.round(window.__interactive) })",
  )) as { paintedMs: number; firstNumberMs: number; interactiveMs: number };
  await ctx.close();
  return r;
}

async function main(): Promise<void> {
  const app = await startApp();
  const browser = await launchBrowser();
  try {
    const handlerPath = await drive(app.url);
    const pages = { overview: "/?refresh=off", handler: `${handlerPath}?refresh=off` };
    const out: Record<string, unknown> = {};
    for (const [name, path] of Object.entries(pages)) {
      await coldLoad(browser, `${app.url}${path}`); // warm-up, not counted
      const loads: Array<{ paintedMs: number; firstNumberMs: number; interactiveMs: number; load1m: number }> = [];
      for (let i = 0; i < LOADS; i++)
        loads.push({ ...(await coldLoad(browser, `${app.url}${path}`)), load1m: +loadavg()[0]!.toFixed(2) });
      const m = median(loads.map((l) => l.paintedMs));
      console.log(
        `[bench-ui] ${name} ${path}: data painted median ${m} ms over ${LOADS} cold loads (${loads.map((l) => l.paintedMs).join(", ")}); first number ${median(loads.map((l) => l.firstNumberMs))} ms; interactive chart (recharts) ${median(loads.map((l) => l.interactiveMs))} ms; load ${loads.map((l) => l.load1m).join(", ")}`,
      );
      out[`ui.${name}_data_painted_ms`] = m;
      out[`${name}Detail`] = {
        path,
        loads,
        firstNumberMedianMs: median(loads.map((l) => l.firstNumberMs)),
        interactiveMedianMs: median(loads.map((l) => l.interactiveMs)),
        loadAvg1m: median(loads.map((l) => l.load1m)),
      };
    }
    if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(out, null, 2));
    console.log(JSON.stringify(out));
  } finally {
    await browser.close();
    await app.stop();
  }
}

runMain(main, "bench-ui");
