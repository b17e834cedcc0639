/**
 * AUTH_MODE=proxy over HTTP against the built app: an authenticating proxy's user headers, from a
 * request whose last X-Forwarded-For hop is a trusted proxy, name the user in the audit trail (in
 * PostgreSQL) and on the Alertmanager silence it creates (amtool); the same headers from anyone
 * else — a client that forwards them itself, or a direct connection Next.js stamps with its own
 * socket address — are anonymous (401), change nothing and are counted on /api/metrics.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type App } from "./harness";
import { startOwnAlertmanager, type OwnAlertmanager } from "@/server/testing/own-alertmanager";

const run = promisify(execFile);
const tag = randomBytes(3).toString("hex");
const db = `ha_e2e_${tag}`;
const service = `ha-e2e-${tag}`;
const alertname = `HaProxyE2e_${tag}`;
/** The test's own Alertmanager (CI's stack runs none on 9093). */
let am: OwnAlertmanager;
let AM: string;
const PG = "postgres://postgres@127.0.0.1:5432";
const PROXY = "10.0.0.2";
let app: App;
let admin: Client;
const silences: string[] = [];

const alice = (from: string | null) => ({
  "x-forwarded-user": "alice",
  "x-forwarded-email": "alice@example.com",
  "x-forwarded-groups": "ha-ops",
  ...(from ? { "x-forwarded-for": from } : {}),
});
const silence = (headers: Record<string, string>) =>
  fetch(`${app.url}/api/silences`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ alertname, service, durationMinutes: 5, comment: "proxy e2e", createdBy: "mallory" }),
  });
const untrustedCount = async () =>
  Number(
    // Labelled or not: an app in embedded mode marks every series `app_mode="embedded"`.
    /^dedup_health_untrusted_identity_headers_total(?:\{[^}]*\})? (\d+)/m.exec(
      await (await fetch(`${app.url}/api/metrics`)).text(),
    )?.[1] ?? 0,
  );

beforeAll(async () => {
  am = await startOwnAlertmanager();
  AM = am.url;
  admin = new Client({ connectionString: `${PG}/test` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${db}`);
  app = await startApp({
    env: {
      DEMO: "off",
      AUTH_MODE: "proxy",
      TRUSTED_PROXIES: PROXY,
      ROLE_BINDINGS: `ha-ops=operator:${service}`,
      ALERTMANAGER_URL: AM,
      DATABASE_URL: `${PG}/${db}`,
    },
  });
}, 90_000);

afterAll(async () => {
  for (const id of silences)
    await run("amtool", ["silence", "expire", `--alertmanager.url=${AM}`, id]).catch(() => undefined);
  await app?.stop();
  await am?.stop();
  await admin.query(`DROP DATABASE IF EXISTS ${db}`).catch(() => undefined);
  await admin.end();
});

describe("AUTH_MODE=proxy over HTTP", () => {
  it("the trusted proxy's user creates the silence: amtool and the audit trail in PostgreSQL name alice, not what the body typed", async () => {
    const res = await silence(alice(`198.51.100.7, ${PROXY}`));
    expect(res.status).toBe(201);
    const { silence: s } = (await res.json()) as { silence: { id: string; createdBy: string } };
    silences.push(s.id);
    const { stdout } = await run("amtool", [
      "silence",
      "query",
      `--alertmanager.url=${AM}`,
      "-o",
      "extended",
      `alertname=${alertname}`,
    ]);
    expect(stdout).toContain(s.id);
    expect(stdout).toMatch(/\balice\b/);
    expect(stdout).not.toContain("mallory");
    const pg = new Client({ connectionString: `${PG}/${db}` });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ who: string; result: string; principal: Record<string, string> }>(
        "SELECT who, result, principal FROM dedup_health_audit WHERE action = 'silence.create'",
      );
      expect(rows).toEqual([
        {
          who: "alice",
          result: "ok",
          principal: expect.objectContaining({
            source: "proxy",
            email: "alice@example.com",
            role: "operator",
            address: "198.51.100.7",
          }),
        },
      ]);
    } finally {
      await pg.end();
    }
  });

  it("the same headers from an untrusted client, or sent straight to the app, are anonymous: 401, no silence, counted", async () => {
    const before = await untrustedCount();
    for (const from of ["198.51.100.7", `${PROXY}, 198.51.100.7`, null]) {
      const res = await silence(alice(from));
      expect(res.status, String(from)).toBe(401);
    }
    expect(await untrustedCount()).toBe(before + 3);
    const { stdout } = await run("amtool", [
      "silence",
      "query",
      "-q",
      `--alertmanager.url=${AM}`,
      `alertname=${alertname}`,
    ]);
    expect(stdout.trim().split("\n").filter(Boolean)).toEqual(silences);
    const who = (await (await fetch(`${app.url}/api/whoami`, { headers: alice("198.51.100.7") })).json()) as {
      source: string;
    };
    expect(who.source).toBe("anonymous");
  });
});
