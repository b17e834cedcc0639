import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type ConsoleMessage, type Locator, type Page } from "playwright-core";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { demoGroupIds } from "@/server/notification/demo-handlers";
import { freePort } from "@/server/testing/net";
import { KafkaTransport } from "@/server/transport";

/** The repo root. */
export const ROOT = join(__dirname, "..");
/** Where e2e screenshots are saved (git-ignored test artifacts). */
export const SCREENSHOTS = join(ROOT, "test-results", "screenshots");

/** Env of the app in real mode against the local stack (`npm run stack:up`). */
export const REAL_ENV = {
  REDIS_URL: "redis://127.0.0.1:6379",
  KAFKA_BROKERS: "127.0.0.1:9092",
  PROMETHEUS_URL: "http://127.0.0.1:9090",
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test",
};

/** Env keys cleared so that embedded mode is really embedded, whatever the caller's shell has. */
const APP_KEYS = [
  "REDIS_URL",
  "REDIS_CLUSTER_NODES",
  "KAFKA_BROKERS",
  "PROMETHEUS_URL",
  "DATABASE_URL",
  "INBOX_DATABASE_URL",
  "INBOX_TABLE",
  "WORKSHOP_TOKEN",
];

export { freePort };

/**
 * The real-mode env of a demo of its own on the shared stack: its service name, topic (and DLQ
 * topic), consumer groups and dedup keys all start with a fresh `tag`, so nothing it writes lands in
 * another process' `notification:dedup:*` keys or `demo.events`; `cleanup()` deletes what it wrote.
 */
export function ownDemoOnStack(name: string): {
  tag: string;
  env: Record<string, string>;
  cleanup: () => Promise<void>;
} {
  const tag = `${name}-${randomBytes(3).toString("hex")}`;
  const topic = `${tag}.events`;
  return {
    tag,
    env: { ...REAL_ENV, SERVICE_NAME: tag, DEMO_TOPIC: topic },
    async cleanup() {
      const redis = createDedupRedis({ url: REAL_ENV.REDIS_URL });
      await deleteKeysByPrefix(redis, tag);
      redis.disconnect();
      const kafka = new KafkaTransport([REAL_ENV.KAFKA_BROKERS]);
      await kafka.deleteGroups(demoGroupIds(tag));
      await kafka.deleteTopics([topic, `${topic}.dlq`]);
      await kafka.close();
    },
  };
}

/** A running `next start` of the built app. */
export interface App {
  url: string;
  pid: number;
  logs: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts the built app (`next build` must have run: `npm test` does it) with `env` on `port`, bound
 * to `host` (default 127.0.0.1; the returned `url` always goes through 127.0.0.1), waits until
 * /api/health answers, and returns a handle that stops it by pid.
 */
export async function startApp(
  opts: { port?: number; env?: Record<string, string>; host?: string } = {},
): Promise<App> {
  if (!existsSync(join(ROOT, ".next", "BUILD_ID")))
    throw new Error("no .next build: run `npx next build` first (npm test does)");
  const port = opts.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production", PORT: String(port) };
  for (const k of APP_KEYS) delete env[k];
  Object.assign(env, opts.env ?? {});
  const child: ChildProcess = spawn(
    join(ROOT, "node_modules", ".bin", "next"),
    ["start", "-p", String(port), "-H", opts.host ?? "127.0.0.1"],
    {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    process.kill(-child.pid, "SIGTERM");
    const t = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), 10_000);
    await exited;
    clearTimeout(t);
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the app exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5_000) });
      if (res.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the app did not answer /api/health within 60 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { url, pid: child.pid ?? -1, logs: () => out, stop };
}

/** Debian's Chromium, headless, with the flags this closed network needs. Never a downloaded browser. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}

/** Collects console errors and page errors of `page` (a test asserts there are none). */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m: ConsoleMessage) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

/**
 * Runs `body` on a new page of `browser` (`options`: its viewport), then fails if the page logged
 * a console or page error ({@link collectErrors}); the page is closed either way.
 */
export async function withPage<T>(
  browser: Browser,
  options: Parameters<Browser["newPage"]>[0],
  body: (page: Page) => Promise<T>,
): Promise<T> {
  const page = await browser.newPage(options);
  const errors = collectErrors(page);
  try {
    const out = await body(page);
    if (errors.length) throw new Error(`console and page errors: ${JSON.stringify(errors, null, 2)}`);
    return out;
  } finally {
    await page.close();
  }
}

/** Saves a full-page screenshot as test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Polls `f` every 0.5 s until it answers something truthy (a throw counts as not yet); fails after `ms` naming `what`. */
export async function until<T>(what: string, ms: number, f: () => Promise<T | undefined | null | false>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * On the key page of `prefix`, clicks the first key's "open the message" and waits for the record:
 * the key's UUID, the link's position and the payload shown.
 */
export async function openMessageFromKey(
  page: Page,
  appUrl: string,
  prefix: string,
): Promise<{ uuid: string; at: URLSearchParams; payload: Locator }> {
  await page.goto(`${appUrl}/keys?prefix=${encodeURIComponent(prefix)}&refresh=off`);
  const row = page
    .getByTestId("key-pages")
    .getByTestId("key-row")
    .filter({ has: page.getByTestId("open-message") })
    .first();
  await row.waitFor({ timeout: 30_000 });
  const uuid = (await row.locator("td").first().textContent())!.trim();
  const at = new URL((await row.getByTestId("open-message").getAttribute("href"))!, appUrl).searchParams;
  await row.getByTestId("open-message").click();
  const payload = page.getByTestId("record-payload");
  await payload.waitFor({ timeout: 30_000 });
  return { uuid, at, payload };
}
