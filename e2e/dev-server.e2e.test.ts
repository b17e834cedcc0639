/**
 * `next dev` opened by an address other than the one it was started with (here
 * 127.0.0.1 and the host's own address, with the dev server bound to all interfaces as `next dev`
 * prints its "Network" address) hydrates: Next.js 16 refuses its dev resources (`/_next/*`, the HMR
 * WebSocket) to origins it does not know, and next.config.js's `allowedDevOrigins` lists loopback
 * and this machine's addresses. Seen as a user does: the status strip and a chart — both drawn by
 * React in the browser, never in the server's HTML — appear, and no dev resource is refused.
 *
 * It is started as the README says, `npm run dev`, with `PORT` and `HOST` in its environment: the
 * port it answers on is the one `PORT` names. It listens on a free port for the test's duration and
 * is stopped by its process group.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { networkInterfaces } from "node:os";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectErrors, freePort, launchBrowser, ROOT, screenshot } from "./harness";

const APP_KEYS = [
  "REDIS_URL",
  "REDIS_CLUSTER_NODES",
  "KAFKA_BROKERS",
  "PROMETHEUS_URL",
  "DATABASE_URL",
  "WORKSHOP_TOKEN",
  "NODE_ENV",
];
/** Drawn only after hydration: the status strip's mode (a client query) and the chart (client-only). */
const HYDRATED = '[data-testid="chart-duplicate-ratio"] :is(.recharts-line, [data-state="empty"])';

let dev: ChildProcess;
let port = 0;
let out = "";
let browser: Browser;

/** The first non-internal IPv4 address of this machine (the "Network" address next dev prints), if any. */
function networkAddress(): string | null {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return null;
}

beforeAll(async () => {
  port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", PORT: String(port), HOST: "0.0.0.0" };
  for (const k of APP_KEYS) delete env[k];
  dev = spawn("npm", ["run", "dev"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  dev.stdout?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  dev.stderr?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const deadline = Date.now() + 170_000;
  for (;;) {
    if (dev.exitCode !== null) throw new Error(`next dev exited with ${dev.exitCode}:\n${out}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(20_000) })).ok) break;
    } catch {
      /* compiling */
    }
    if (Date.now() > deadline) throw new Error(`next dev did not answer /api/health within 170 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  if (dev?.pid && dev.exitCode === null) {
    const exited = new Promise<void>((r) => dev.once("exit", () => r()));
    process.kill(-dev.pid, "SIGTERM");
    const t = setTimeout(() => dev.pid && process.kill(-dev.pid, "SIGKILL"), 10_000);
    await exited;
    clearTimeout(t);
  }
});

describe("the dev server opened by 127.0.0.1 and by the host's address", () => {
  const hosts = ["127.0.0.1", ...(networkAddress() ? [networkAddress()!] : [])];
  for (const host of hosts) {
    it(`http://${host}:<port>/ hydrates: the overview shows numbers and a chart, no dev resource refused`, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = collectErrors(page);
      const refused: string[] = [];
      page.on("response", (r) => {
        if (r.status() === 403 && new URL(r.url()).pathname.startsWith("/_next")) refused.push(r.url());
      });
      await page.goto(`http://${host}:${port}/?refresh=off`, { waitUntil: "commit", timeout: 120_000 });
      // The dev compile of the page and its chunks can take a while on 2 cores.
      await page.locator(HYDRATED).first().waitFor({ state: "attached", timeout: 120_000 });
      await expect.poll(() => page.getByTestId("mode").textContent(), { timeout: 30_000 }).toMatch(/in-memory store/);
      expect(await page.getByTestId("stat-ratio").first().textContent()).toMatch(/%|no traffic/);
      expect(await page.getByText("Loading overview…").count()).toBe(0);
      if (host === "127.0.0.1") await screenshot(page, "dev-server-127.0.0.1");
      expect(refused).toEqual([]);
      expect(out).not.toMatch(/Blocked cross-origin request/);
      expect(errors.filter((e) => /hmr|WebSocket|_next/i.test(e))).toEqual([]);
      await page.close();
    }, 180_000);
  }
});
