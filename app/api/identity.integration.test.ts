/**
 * AUTH_MODE=proxy against the real stores: the user a trusted proxy names is who the audit trail
 * (read back from PostgreSQL) and an Alertmanager silence (read back with amtool) say did it; the
 * same headers from an untrusted peer are anonymous, refused and counted; a viewer and an operator
 * of another service are refused, each refusal audited; a change whose entry cannot be written is
 * not made (503), and a NUL in what a client typed no longer keeps its entry out of PostgreSQL.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { Client } from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as auditGET } from "@/app/api/audit/route";
import { POST as forget } from "@/app/api/keys/forget/route";
import { DELETE as expireSilence } from "@/app/api/silences/[id]/route";
import { POST as createSilence } from "@/app/api/silences/route";
import { GET as whoami } from "@/app/api/whoami/route";
import { auditResponseSchema } from "@/lib/api/audit";
import { setAuditStore } from "@/server/audit";
import { auditMarkers } from "@/server/audit/markers";
import { MemoryAuditStore, PostgresAuditStore } from "@/server/audit/store";
import { untrustedIdentityCounter } from "@/server/auth/proxy-identity";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { TEST_DATABASE_URL } from "@/server/testing/buggy-consumer";
import { startOwnAlertmanager, type OwnAlertmanager } from "@/server/testing/own-alertmanager";

const run = promisify(execFile);
configOfFile();
const tag = randomBytes(3).toString("hex");
const service = `ha-svc-${tag}`;
const table = `ha_audit_${tag}`;
const alertname = `HaIdentity_${tag}`;
/** The test's own Alertmanager (CI's stack runs none on 9093). */
let am: OwnAlertmanager;
let AM: string;
const keyOf = (u: string) => `${service}:dedup:h:${u}`;
let redis: Redis;
let observeRedis: RedisLike;
let store: PostgresAuditStore;
let pg: Client;
const silences: string[] = [];

const PROXY = "10.0.0.2";
const user = (name: string, groups: string, from = `198.51.100.7, ${PROXY}`) => ({
  "x-forwarded-user": name,
  "x-forwarded-email": `${name}@example.com`,
  "x-forwarded-groups": groups,
  "x-forwarded-for": from,
});
const ALICE = user("alice", "ha-ops");
const request = (path: string, method: string, headers: Record<string, string>, body?: unknown) =>
  new Request(`http://dash.example.com${path}`, {
    method,
    headers: { host: "dash.example.com", "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const forgetAs = (headers: Record<string, string>, u: string) =>
  forget(request("/api/keys/forget", "POST", headers, { service, handler: "h", uuids: [u], dryRun: false }));
const rows = async (where: string, ...args: unknown[]) =>
  (
    await pg.query<{ who: string; result: string; principal: Record<string, string>; filter: Record<string, unknown> }>(
      `SELECT who, result, principal, filter FROM "${table}" WHERE ${where} ORDER BY id`,
      args,
    )
  ).rows;

beforeAll(async () => {
  am = await startOwnAlertmanager();
  AM = am.url;
  useConfig({
    REDIS_URL: "redis://127.0.0.1:6379",
    ALERTMANAGER_URL: AM,
    AUTH_MODE: "proxy",
    TRUSTED_PROXIES: PROXY,
    ROLE_BINDINGS: `ha-ops=operator:${service},ha-view=viewer:*,ha-other=operator:ha-other-${tag},ha-sre=admin:*`,
  });
  redis = new Redis("redis://127.0.0.1:6379");
  observeRedis = createObserveRedis({ url: "redis://127.0.0.1:6379" });
  setObserveContext(createObserveContext({ metrics: new LocalSource(new Registry()), redis: observeRedis }));
  for (const u of ["u1", "u2", "u3"]) await redis.set(keyOf(u), "done:x:0:1", "PX", 600_000);
  store = new PostgresAuditStore(TEST_DATABASE_URL, table);
  await store.migrate();
  await setAuditStore(store);
  pg = new Client({ connectionString: TEST_DATABASE_URL });
  await pg.connect();
}, 60_000);

afterAll(async () => {
  for (const id of silences)
    await run("amtool", ["silence", "expire", `--alertmanager.url=${AM}`, id]).catch(() => undefined);
  await am?.stop();
  setObserveContext(null);
  await redis.del(keyOf("u1"), keyOf("u2"), keyOf("u3"));
  redis.disconnect();
  observeRedis.disconnect();
  await store.drop();
  await setAuditStore(null);
  await pg.end();
});

describe("AUTH_MODE=proxy", () => {
  it("a trusted proxy's user is who the trail names, with e-mail, role, source and address, read back from PostgreSQL", async () => {
    const res = await forgetAs(ALICE, "u1");
    expect(res.status).toBe(200);
    expect(await redis.exists(keyOf("u1"))).toBe(0);
    const [row] = await rows("action = 'keys.forget' AND who = $1", "alice");
    expect(row).toMatchObject({
      who: "alice",
      result: "ok",
      principal: { source: "proxy", email: "alice@example.com", role: "operator", address: "198.51.100.7" },
    });
    const me = (await (await whoami(request("/api/whoami", "GET", ALICE))).json()) as {
      name: string;
      may: { write: unknown };
    };
    expect(me).toMatchObject({ name: "alice", may: { write: [service] } });
  });

  it("a silence's creator is the user, not what the body says; amtool shows the name; a NUL in its comment does not keep the entry out", async () => {
    const body = {
      alertname,
      service,
      durationMinutes: 5,
      comment: "ha identity test \u0000 with a NUL",
      createdBy: "someone-else",
    };
    const res = await createSilence(request("/api/silences", "POST", ALICE, body));
    expect(res.status).toBe(201);
    const { silence } = (await res.json()) as { silence: { id: string; createdBy: string } };
    silences.push(silence.id);
    expect(silence.createdBy).toBe("alice");
    const { stdout } = await run("amtool", [
      "silence",
      "query",
      `--alertmanager.url=${AM}`,
      "-o",
      "extended",
      `alertname=${alertname}`,
    ]);
    expect(stdout).toContain(silence.id);
    expect(stdout).toMatch(/\balice\b/);
    expect(stdout).not.toContain("someone-else");
    const [row] = await rows("action = 'silence.create' AND filter->>'alertname' = $1", alertname);
    expect(row).toMatchObject({ who: "alice", result: "ok" });
    expect(String(row!.filter.comment)).toBe("ha identity test \ufffd with a NUL");
    // The operator expires its own service's silence (the role is checked on the silence's service).
    expect(
      (
        await expireSilence(request(`/api/silences/${silence.id}`, "DELETE", ALICE), {
          params: Promise.resolve({ id: silence.id }),
        })
      ).status,
    ).toBe(200);
  });

  it("the same headers from an untrusted peer: anonymous, 401 on writes, nothing changed, counted", async () => {
    const before = (await untrustedIdentityCounter().get()).values[0]?.value ?? 0;
    for (const from of ["198.51.100.7", `${PROXY}, 198.51.100.7`]) {
      const res = await forgetAs(user("alice", "ha-ops ha-sre", from), "u2");
      expect(res.status, from).toBe(401);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/^anonymous: /);
    }
    expect(await redis.exists(keyOf("u2"))).toBe(1);
    expect((await untrustedIdentityCounter().get()).values[0]?.value).toBe(before + 2);
    const me = (await (
      await whoami(request("/api/whoami", "GET", user("alice", "ha-ops", "198.51.100.7")))
    ).json()) as { source: string; may: { write: unknown } };
    expect(me).toMatchObject({ source: "anonymous", may: { write: [] } });
  });

  it("a viewer's forget and an operator of another service's: 403 with the reason, audited as refused, the key kept", async () => {
    for (const [name, groups, role] of [
      ["bob", "ha-view", "viewer: \\*"],
      ["carol", "ha-other", `operator: ha-other-${tag}`],
    ] as const) {
      const res = await forgetAs(user(name, groups), "u2");
      expect(res.status, name).toBe(403);
      const { error, detail } = (await res.json()) as { error: string; detail: string };
      expect(error).toBe("forbidden");
      expect(detail).toMatch(new RegExp(`^${name} is ${role}; keys.forget on ${service} needs operator$`));
      const [row] = await rows("action = 'keys.forget' AND who = $1", name);
      expect(row?.result).toBe(`refused: ${detail}`);
    }
    expect(await redis.exists(keyOf("u2"))).toBe(1);
  });

  it("the trail of everyone is an admin's: anyone else reads only their own entries, anonymous none", async () => {
    const list = async (h: Record<string, string>) =>
      auditResponseSchema.parse(await (await auditGET(request("/api/audit?limit=500", "GET", h))).json()).entries;
    expect(new Set((await list(user("bob", "ha-view"))).map((e) => e.who))).toEqual(new Set(["bob"]));
    expect(new Set((await list(user("root", "ha-sre"))).map((e) => e.who))).toEqual(new Set(["alice", "bob", "carol"]));
    expect((await auditGET(request("/api/audit", "GET", { "x-forwarded-for": "198.51.100.7" }))).status).toBe(401);
  });

  it("the service's chart markers name the user and leave refusals out (nothing changed)", async () => {
    const titles = (await auditMarkers({ from: new Date(Date.now() - 600_000), to: new Date(), service })).map(
      (m) => m.title,
    );
    expect(titles).toContain("Keys forgotten on h: 1 deleted of 1 matched (by alice)");
    expect(titles.join("\n")).not.toMatch(/bob|carol/);
  });
});

describe("no change without its audit entry", () => {
  it("a store that refuses the entry: 503, the key still in Redis", async () => {
    class Refusing extends MemoryAuditStore {
      override async append(): Promise<never> {
        throw new Error("disk full");
      }
    }
    await setAuditStore(new Refusing());
    try {
      const res = await forgetAs(ALICE, "u3");
      expect(res.status).toBe(503);
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /keys.forget was not performed: every change is audited/,
      );
      expect(await redis.exists(keyOf("u3"))).toBe(1);
    } finally {
      // Replacing the store closed the PostgreSQL one: the next tests read a new one of the same table.
      store = new PostgresAuditStore(TEST_DATABASE_URL, table);
      await setAuditStore(store);
    }
  });

  it("the entry is written 'started' before the change is made", async () => {
    let seen: string | null = null;
    await redis.set(keyOf("u3"), "done:x:0:1", "PX", 600_000);
    const spy = store.complete.bind(store);
    store.complete = async (id, c) => {
      seen = (await rows("id = $1", id))[0]?.result ?? null;
      return spy(id, c);
    };
    try {
      expect((await forgetAs(ALICE, "u3")).status).toBe(200);
    } finally {
      store.complete = spy;
    }
    expect(seen).toBe("started");
  });
});
