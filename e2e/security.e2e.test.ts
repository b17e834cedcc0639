/**
 * Case 8 (issue 8): every page and every API route answers with a Content-Security-Policy that has
 * `frame-ancestors`, `X-Content-Type-Options: nosniff` and a Referrer-Policy (error answers and
 * static assets too); and no server-only code or configuration value reaches the browser: the
 * built `.next/static` files contain no `ioredis`, `kafkajs`, `prom-client` (or `pg`) code, and
 * neither they nor anything a browser loads from the running app (HTML, RSC payloads, scripts,
 * API answers) contains a secret the app was started with — a distinctive Redis password,
 * database password and workshop token. (Host names and ports may be shown by the health panel.)
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverRoutes } from "@/scripts/fuzz-api";
import { startFaultApp, type FaultApp } from "@/test/faults/lib/app";
import { launchBrowser, ROOT } from "./harness";

const TOKEN = `wsTok${Date.now().toString(36)}qx7z`;
const DB_PASSWORD = `pgPw${Date.now().toString(36)}vq3k`;
const BROKERS = `kafka-${Date.now().toString(36)}.invalid:19999`;

/** Server-only packages and strings only their code contains. */
const SERVER_ONLY = [/ioredis/i, /kafkajs/i, /prom-client/i, /pg-pool|pg-protocol|node-postgres/i, /enableAutoPipelining|maxRetriesPerRequest/, /KafkaJSProtocolError|KafkaJSConnectionError/];

function files(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) files(p, out);
    else out.push(p);
  }
  return out;
}

function pagePaths(): string[] {
  return discoverRoutes()
    .filter((r) => r.kind === "page")
    .map((r) => r.template.replace(/\[service\]/, "notification").replace(/\[handler\]/, "on-review-created").replace(/\[[^\]]+\]/g, "x"));
}

function apiPaths(): Array<{ path: string; methods: string[] }> {
  return discoverRoutes()
    .filter((r) => r.kind === "api")
    .map((r) => ({ path: r.template.replace(/\[name\]/, "retry-on-error").replace(/\[[^\]]+\]/g, "x"), methods: r.methods }));
}

function expectSecurityHeaders(h: Headers, what: string): void {
  const csp = h.get("content-security-policy");
  expect(csp, `${what}: Content-Security-Policy`).toBeTruthy();
  expect(csp!, `${what}: CSP frame-ancestors`).toMatch(/frame-ancestors\s+('none'|'self')/);
  expect(csp!, `${what}: CSP object-src`).toMatch(/object-src 'none'/);
  expect(h.get("x-content-type-options"), `${what}: nosniff`).toBe("nosniff");
  expect(h.get("referrer-policy"), `${what}: Referrer-Policy`).toMatch(/^(no-referrer|same-origin|strict-origin|strict-origin-when-cross-origin)$/);
}

describe("security: headers on every response, nothing server-only in the browser", () => {
  let fa: FaultApp;
  let browser: Browser;
  /** Secrets: never in anything the browser gets. */
  let secrets: string[];
  /** Every configuration value (secrets, URLs, broker list): never in the built static files. */
  let values: string[];

  beforeAll(async () => {
    fa = await startFaultApp({ WORKSHOP_TOKEN: TOKEN, DATABASE_URL: `postgres://postgres:${DB_PASSWORD}@127.0.0.1:5432/test`, KAFKA_BROKERS: BROKERS });
    browser = await launchBrowser();
    secrets = [fa.password, TOKEN, DB_PASSWORD];
    values = [...secrets, BROKERS, fa.redis.url, `postgres://postgres:${DB_PASSWORD}@127.0.0.1:5432/test`, fa.prometheus.url];
  });

  afterAll(async () => {
    await browser?.close();
    await fa?.close();
  });

  it("every page sends CSP with frame-ancestors, nosniff and Referrer-Policy", async () => {
    const pages = pagePaths();
    expect(pages.length).toBeGreaterThanOrEqual(4);
    for (const p of [...pages, "/no-such-page"]) {
      const res = await fetch(`${fa.app.url}${p}`);
      expectSecurityHeaders(res.headers, `GET ${p} (${res.status})`);
    }
  });

  it("every API route sends them too, on success, bad input, wrong methods and upstream errors", async () => {
    const apis = apiPaths();
    expect(apis.length).toBeGreaterThanOrEqual(10);
    for (const a of apis) {
      for (const m of [...a.methods, "DELETE"]) {
        const res = await fetch(`${fa.app.url}${a.path}?range=bogus&prefix=`, { method: m, body: m === "GET" || m === "HEAD" || m === "DELETE" ? undefined : "{", headers: { "content-type": "application/json" } });
        // Statuses are the fuzz case's business (test/faults); here a 503 of an unreachable upstream counts too.
        expectSecurityHeaders(res.headers, `${m} ${a.path} (${res.status})`);
      }
    }
  });

  it("static assets carry them and are served as what they are", async () => {
    const js = files(join(ROOT, ".next", "static")).find((f) => f.endsWith(".js"))!;
    const res = await fetch(`${fa.app.url}/_next/static/${relative(join(ROOT, ".next", "static"), js).split("\\").join("/")}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/javascript/);
    expectSecurityHeaders(res.headers, "static chunk");
  });

  it(".next/static holds no server-only package code and no configuration value", () => {
    const all = files(join(ROOT, ".next", "static")).filter((f) => /\.(js|css|json|txt|map|html)$/.test(f));
    expect(all.filter((f) => f.endsWith(".js")).length).toBeGreaterThan(5);
    const hits: string[] = [];
    for (const f of all) {
      const text = readFileSync(f, "utf8");
      for (const re of SERVER_ONLY) if (re.test(text)) hits.push(`${relative(ROOT, f)}: ${re}`);
      for (const v of values) if (text.includes(v)) hits.push(`${relative(ROOT, f)}: the configuration value ${v.slice(0, 12)}…`);
    }
    expect(hits).toEqual([]);
  });

  it("nothing a browser loads from the running app (documents, RSC payloads, scripts, API answers) contains a configuration value or server-only code", async () => {
    const page = await browser.newPage();
    const bodies: Array<{ url: string; text: string }> = [];
    const pending: Promise<void>[] = [];
    page.on("response", (r) => {
      pending.push(
        r
          .text()
          .then((text) => void bodies.push({ url: r.url(), text }))
          .catch(() => undefined),
      );
    });
    for (const p of pagePaths()) {
      await page.goto(`${fa.app.url}${p}`, { waitUntil: "networkidle" }).catch(() => undefined);
      // The RSC payload of a client-side navigation.
      const rsc = await fetch(`${fa.app.url}${p}`, { headers: { rsc: "1" } });
      bodies.push({ url: `${p} (rsc)`, text: await rsc.text() });
    }
    await Promise.all(pending);
    await page.close();
    expect(bodies.length).toBeGreaterThan(10);
    const hits: string[] = [];
    for (const b of bodies) {
      for (const s of secrets) if (b.text.includes(s)) hits.push(`${b.url}: contains the secret ${s.slice(0, 6)}…`);
      if (/\.js(\?|$)/.test(b.url)) for (const re of SERVER_ONLY) if (re.test(b.text)) hits.push(`${b.url}: ${re}`);
    }
    expect(hits).toEqual([]);
  });
});
