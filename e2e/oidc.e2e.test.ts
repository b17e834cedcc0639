/**
 * OIDC sign-in against a real OpenID Provider (oidc-provider in-process, server/testing/oidc-provider.ts)
 * and the built app in `AUTH_MODE=oidc` on Redis: two users in two groups (`vera` in `viewers`,
 * `otto` in `billing-devs`), `ROLE_BINDINGS` making viewers read everywhere and billing-devs
 * operators of one service. In Chromium: "Sign in" goes through the provider's login form and back;
 * the viewer's forget is a 403 with the reason, audited as refused, and deletes nothing; the
 * operator's forget of its own service's key deletes it in Redis and the audit page names the
 * operator; its forget of another service's key is a 403; "Sign out" ends the session; a forged
 * or expired session cookie is anonymous.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { BrowserContext, Page, Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dedupKeyPrefix } from "@/names/keys";
import { SESSION_COOKIE, signValue } from "@/server/auth/oidc-cookie";
import { startTestOidcProvider, type TestOidcProvider } from "@/server/testing/oidc-provider";
import { freePort } from "@/server/testing/net";
import { launchBrowser, REAL_ENV, startApp, type App } from "./harness";

const tag = `hb-oidc-${randomBytes(3).toString("hex")}`;
const other = `hb-oidc-other-${randomBytes(3).toString("hex")}`;
const HANDLER = "on-invoice";
const SECRET = randomBytes(32).toString("base64url");
const ownKey = (u: string) => `${dedupKeyPrefix(tag, HANDLER)}:${u}`;
const otherKey = (u: string) => `${dedupKeyPrefix(other, HANDLER)}:${u}`;

/** A free port of this suite's range (3500-3599), else any free port. */
async function portInRange(taken: number[] = []): Promise<number> {
  const { createServer } = await import("node:net");
  for (let i = 0; i < 20; i++) {
    const p = 3500 + Math.floor(Math.random() * 100);
    if (taken.includes(p)) continue;
    const free = await new Promise<boolean>((r) => {
      const s = createServer().once("error", () => r(false));
      s.listen(p, "127.0.0.1", () => s.close(() => r(true)));
    });
    if (free) return p;
  }
  return freePort();
}

let op: TestOidcProvider;
let app: App;
let browser: Browser;
let redis: Redis;

beforeAll(async () => {
  const opPort = await portInRange();
  const appPort = await portInRange([opPort]);
  const appUrl = `http://127.0.0.1:${appPort}`;
  op = await startTestOidcProvider({
    port: opPort,
    redirectUris: [`${appUrl}/api/auth/callback`],
    postLogoutRedirectUris: [`${appUrl}/`],
    users: [
      { id: "vera", email: "vera@example.com", groups: ["viewers"] },
      { id: "otto", email: "otto@example.com", groups: ["billing-devs"] },
    ],
  });
  redis = new Redis(REAL_ENV.REDIS_URL);
  [app, browser] = await Promise.all([
    startApp({
      port: appPort,
      env: {
        REDIS_URL: REAL_ENV.REDIS_URL,
        DEMO: "off",
        AUTH_MODE: "oidc",
        OIDC_ISSUER: op.issuer,
        OIDC_CLIENT_ID: op.clientId,
        OIDC_CLIENT_SECRET: op.clientSecret,
        OIDC_SCOPES: "openid profile email groups",
        SESSION_SECRET: SECRET,
        ROLE_BINDINGS: `viewers=viewer:*,billing-devs=operator:${tag}`,
      },
    }),
    launchBrowser(),
  ]);
}, 120_000);

afterAll(async () => {
  const keys = [
    ...((await redis?.keys(`${dedupKeyPrefix(tag, "*")}*`)) ?? []),
    ...((await redis?.keys(`${dedupKeyPrefix(other, "*")}*`)) ?? []),
  ];
  if (keys.length) await redis.del(...keys);
  redis?.disconnect();
  await Promise.all([browser?.close(), app?.stop(), op?.stop()]);
});

/** A POST of JSON from the page's own origin (what the page's buttons send). */
async function postFromPage(
  page: Page,
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(
    async ([p, b]) => {
      const r = await fetch(p, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(b),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    },
    [path, body] as const,
  );
}

async function getFromPage(page: Page, path: string): Promise<Record<string, unknown>> {
  return page.evaluate(async (p) => (await (await fetch(p)).json()) as Record<string, unknown>, path);
}

/** Opens the audit page in a fresh context, clicks "Sign in", fills the provider's form as `user`; back on the audit page, signed in. */
async function signIn(user: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${app.url}/audit`);
  await page.getByTestId("sign-in").click();
  await page.waitForURL((u) => u.origin === op.issuer, { timeout: 15_000 });
  const form = page.locator('input[name="login"]');
  await form.waitFor({ timeout: 10_000 }).catch(async () => {
    throw new Error(`no login form at ${page.url()}: ${(await page.content()).slice(0, 1500)}`);
  });
  await form.fill(user);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  await page.waitForURL(`${app.url}/audit`, { timeout: 15_000 });
  await page.getByTestId("sign-out").waitFor({ timeout: 15_000 });
  return { context, page };
}

const forget = (service: string, uuid: string) => ({ service, handler: HANDLER, uuids: [uuid], dryRun: false });

describe("OIDC sign-in with roles per service", () => {
  let vera: { context: BrowserContext; page: Page };
  let otto: { context: BrowserContext; page: Page };

  it("a viewer signs in through the provider's form: the session names her and her group", async () => {
    vera = await signIn("vera");
    const cookie = (await vera.context.cookies()).find((c) => c.name === SESSION_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false });
    const s = await getFromPage(vera.page, "/api/auth/session");
    expect(s).toMatchObject({ signIn: true, user: { name: "vera", email: "vera@example.com", groups: ["viewers"] } });
    expect(await getFromPage(vera.page, "/api/whoami")).toMatchObject({
      mode: "oidc",
      source: "oidc",
      name: "vera",
      grants: [{ role: "viewer", services: "*" }],
      may: { write: [] },
    });
  });

  it("the viewer's forget is a 403 saying why, deletes nothing, and the audit keeps the refusal", async () => {
    const uuid = randomBytes(8).toString("hex");
    await redis.set(ownKey(uuid), "done", "EX", 600);
    const r = await postFromPage(vera.page, "/api/keys/forget", forget(tag, uuid));
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("forbidden");
    expect(String(r.body.detail)).toMatch(/vera/);
    expect(String(r.body.detail)).toMatch(/operator/);
    expect(await redis.exists(ownKey(uuid))).toBe(1);
    const audit = (await getFromPage(vera.page, "/api/audit?action=keys.forget")) as {
      entries?: { who: string; result: string }[];
    };
    expect(audit.entries?.find((e) => e.who === "vera")?.result).toMatch(/^refused/);
  });

  it("an operator forgets its own service's key (gone in Redis) and the audit page names it", async () => {
    otto = await signIn("otto");
    const uuid = randomBytes(8).toString("hex");
    await redis.set(ownKey(uuid), "done", "EX", 600);
    expect(await getFromPage(otto.page, "/api/whoami")).toMatchObject({
      name: "otto",
      email: "otto@example.com",
      groups: ["billing-devs"],
      may: { write: [tag] },
    });
    const r = await postFromPage(otto.page, "/api/keys/forget", forget(tag, uuid));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.deleted).toBe(1);
    expect(await redis.exists(ownKey(uuid))).toBe(0);
    await otto.page.reload();
    const row = otto.page.locator("tr", { hasText: "keys.forget" }).filter({ hasText: "otto" }).first();
    await row.waitFor({ timeout: 15_000 });
  });

  it("the operator's forget of another service's key is a 403 and the key stays", async () => {
    const uuid = randomBytes(8).toString("hex");
    await redis.set(otherKey(uuid), "done", "EX", 600);
    const r = await postFromPage(otto.page, "/api/keys/forget", forget(other, uuid));
    expect(r.status).toBe(403);
    expect(String(r.body.detail)).toMatch(new RegExp(other));
    expect(await redis.exists(otherKey(uuid))).toBe(1);
  });

  it("sign-out ends the session: the cookie is gone and a forget is refused as anonymous", async () => {
    await otto.page.getByTestId("sign-out").click();
    await otto.page.waitForURL((u) => u.origin === op.issuer, { timeout: 15_000 });
    expect((await otto.context.cookies(app.url)).find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    await otto.page.goto(`${app.url}/audit`);
    await otto.page.getByTestId("sign-in").waitFor({ timeout: 15_000 });
    expect(await getFromPage(otto.page, "/api/auth/session")).toMatchObject({ signIn: true, user: null });
    const uuid = randomBytes(8).toString("hex");
    await redis.set(ownKey(uuid), "done", "EX", 600);
    expect((await postFromPage(otto.page, "/api/keys/forget", forget(tag, uuid))).status).toBe(401);
    expect(await redis.exists(ownKey(uuid))).toBe(1);
    await Promise.all([otto.context.close(), vera.context.close()]);
  });

  it("a callback without this browser's sign-in, or with another state, sets no session", async () => {
    const bare = await fetch(`${app.url}/api/auth/callback?code=abc&state=xyz`, { redirect: "manual" });
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { detail: string }).detail).toMatch(/no sign-in in progress/);
    const login = await fetch(`${app.url}/api/auth/login?returnTo=%2F%2Fevil.example`, { redirect: "manual" });
    expect(login.status).toBe(302);
    expect(new URL(login.headers.get("location")!).origin).toBe(op.issuer);
    const loginCookie = login.headers.getSetCookie()[0]!.split(";")[0]!;
    // The login state the cookie carries (signed, readable): the return path fell back to the app's own `/`.
    expect(JSON.parse(Buffer.from(loginCookie.split("=")[1]!.split(".")[0]!, "base64url").toString())).toMatchObject({
      typ: "login",
      returnTo: "/",
    });
    const wrong = await fetch(
      `${app.url}/api/auth/callback?code=abc&state=not-the-state&iss=${encodeURIComponent(op.issuer)}`,
      { redirect: "manual", headers: { cookie: loginCookie } },
    );
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { detail: string }).detail).toMatch(/state/);
    expect(wrong.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
  });

  it("a forged or expired session cookie is anonymous; the same claims signed and current name the user", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { typ: "session", name: "otto", groups: ["billing-devs"] };
    const valid = signValue({ ...claims, exp: now + 600 }, SECRET);
    const expired = signValue({ ...claims, exp: now - 1 }, SECRET);
    const forged = signValue({ ...claims, exp: now + 600 }, randomBytes(32).toString("base64url"));
    const [body, mac] = signValue({ typ: "session", name: "vera", groups: ["viewers"], exp: now + 600 }, SECRET).split(
      ".",
    );
    const promoted = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, "base64url").toString()), groups: ["billing-devs"] })).toString("base64url")}.${mac}`;
    const sessionOf = async (cookie: string) =>
      (
        (await (
          await fetch(`${app.url}/api/auth/session`, { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } })
        ).json()) as { user: { name: string } | null }
      ).user;
    expect((await sessionOf(valid))?.name).toBe("otto");
    for (const bad of [expired, forged, promoted]) expect(await sessionOf(bad)).toBeNull();
    const uuid = randomBytes(8).toString("hex");
    await redis.set(ownKey(uuid), "done", "EX", 600);
    for (const bad of [expired, forged, promoted]) {
      const r = await fetch(`${app.url}/api/keys/forget`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: `${SESSION_COOKIE}=${bad}` },
        body: JSON.stringify(forget(tag, uuid)),
      });
      expect(r.status).toBe(401);
    }
    expect(await redis.exists(ownKey(uuid))).toBe(1);
  });
});
