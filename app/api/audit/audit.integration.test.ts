/**
 * The audit trail's store: PostgreSQL is migrated at start-up (idempotent) and an unreachable
 * `DATABASE_URL` is a start-up error naming the variable; while it does not answer, `GET /api/audit`
 * is a 503 "audit store unavailable" and an action that changes state is refused with that 503 and
 * not performed (a dry run still answers). Without it the trail is in memory and `GET /api/audit`
 * says so. A failed action is recorded with its error.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { GET } from "./route";
import { GET as getSources, PUT as putSources } from "../demo/sources/route";
import { consumerRuntime } from "@/server/runtime";
import { AUDIT_TOUCHED_MAX, auditResponseSchema, touchedList } from "@/lib/api/audit";
import { parseConfig } from "@/server/config";
import { freePort } from "@/server/testing/net";
import { LOCAL_REQUEST_HEADERS } from "@/server/testing/app-config";
import { TEST_DATABASE_URL } from "@/server/testing/buggy-consumer";
import { audited, initAudit, setAuditStore } from "@/server/audit";
import { PostgresAuditStore } from "@/server/audit/store";

const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
const saved = g.__dedupHealthConfig;
afterAll(async () => {
  await setAuditStore(null);
  g.__dedupHealthConfig = saved;
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("audit trail store", () => {
  it("names DATABASE_URL at start-up when the database is unreachable; the trail answers 503", async () => {
    g.__dedupHealthConfig = parseConfig({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/test` });
    await setAuditStore(null);
    await expect(initAudit()).rejects.toThrow(/^DATABASE_URL: .*unreachable/);
    const res = await GET(new Request("http://localhost/api/audit"));
    expect(res.status).toBe(503);
  });

  it("while the database does not answer: the trail says 'audit store unavailable' (redacted) and a change is refused 503 and not made; a dry run answers", async () => {
    const port = await freePort();
    g.__dedupHealthConfig = parseConfig({ DATABASE_URL: `postgres://puser:ppass@127.0.0.1:${port}/test` });
    await setAuditStore(null);
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
    try {
      const trail = await GET(new Request("http://localhost/api/audit"));
      const text = await trail.text();
      expect(trail.status).toBe(503);
      expect(JSON.parse(text).detail).toMatch(
        /^audit store unavailable: .*refused until it answers \(check DATABASE_URL\)$/,
      );
      for (const secret of [String(port), "ppass", "puser"]) expect(text).not.toContain(secret);
      const before = consumerRuntime().demo.getSources().traffic.enabled;
      const put = () =>
        putSources(
          new Request("http://localhost/api/demo/sources", {
            method: "PUT",
            headers: { ...LOCAL_REQUEST_HEADERS, "content-type": "application/json" },
            body: JSON.stringify({ traffic: { enabled: !before } }),
          }),
        );
      const refused = await put();
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(
        /^audit store unavailable: .*demo\.sources was not performed/,
      );
      const now = (await (
        await getSources(new Request("http://localhost/api/demo/sources", { headers: LOCAL_REQUEST_HEADERS }))
      ).json()) as { traffic: { enabled: boolean } };
      expect(now.traffic.enabled).toBe(before);
      let ran = false;
      const req = new Request("http://localhost/api/x", { method: "POST", headers: LOCAL_REQUEST_HEADERS });
      await expect(audited(req, "keys.forget", {}, true, async () => (ran = true))).resolves.toBe(true);
      expect(ran).toBe(true);
    } finally {
      await consumerRuntime().close();
    }
  });

  it("migrates twice without harm and keeps entries across a new connection", async () => {
    const table = `act_audit_${randomBytes(3).toString("hex")}`;
    const a = new PostgresAuditStore(TEST_DATABASE_URL, table);
    try {
      await a.migrate();
      await a.migrate();
      await a.append({
        who: "local",
        action: "dlq.redrive",
        filter: { uuids: ["u1"] },
        dryRun: false,
        matched: 1,
        changed: 1,
        result: "ok",
      });
      const b = new PostgresAuditStore(TEST_DATABASE_URL, table);
      expect(await b.list({ limit: 10 })).toMatchObject([
        { who: "local", action: "dlq.redrive", filter: { uuids: ["u1"] }, matched: 1, changed: 1 },
      ]);
      await b.close();
    } finally {
      await a.drop();
      await a.close();
    }
  });

  it("keeps what an action touched, bounded per kind with the full count, across a new connection; a table made before it is migrated", async () => {
    const table = `act_audit_${randomBytes(3).toString("hex")}`;
    const a = new PostgresAuditStore(TEST_DATABASE_URL, table);
    try {
      // The table as it was before entries kept what an action touched.
      await a.migrate();
      await a.append({
        who: "local",
        action: "keys.forget",
        filter: {},
        dryRun: false,
        matched: 1,
        changed: 1,
        result: "ok",
      });
      const pg = new Client({ connectionString: TEST_DATABASE_URL });
      await pg.connect();
      await pg.query(`ALTER TABLE "public"."${table}" DROP COLUMN touched`);
      await pg.end();
      const b = new PostgresAuditStore(TEST_DATABASE_URL, table);
      const uuids = Array.from({ length: 150 }, (_, i) => `u${i}`);
      const req = new Request("http://localhost/api/x", { method: "POST", headers: LOCAL_REQUEST_HEADERS });
      await setAuditStore(b);
      process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
      await audited(
        req,
        "dlq.redrive",
        {},
        false,
        async () => uuids,
        (r) => ({
          matched: r.length,
          changed: r.length,
          touched: { uuids: touchedList(r), sourceOffsets: touchedList(["t.dlq/0/7"]) },
        }),
      );
      const c = new PostgresAuditStore(TEST_DATABASE_URL, table);
      const [newest, old] = await c.list({ limit: 10 });
      await c.close();
      expect(newest!.touched.uuids!.items).toEqual(uuids.slice(0, AUDIT_TOUCHED_MAX));
      expect(newest!.touched.uuids!.total).toBe(150);
      expect(newest!.touched.sourceOffsets).toEqual({ items: ["t.dlq/0/7"], total: 1 });
      expect(old!.touched).toEqual({});
      const shown = auditResponseSchema.parse(await (await GET(new Request("http://localhost/api/audit"))).json());
      expect(shown.entries[0]!.touched.uuids!.total).toBe(150);
    } finally {
      await a.drop();
      await a.close();
      await setAuditStore(null);
    }
  });

  it("in memory without DATABASE_URL (the answer says so), recording a failed action with its error", async () => {
    g.__dedupHealthConfig = parseConfig({});
    await setAuditStore(null);
    expect(await initAudit()).toBe("memory");
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
    const req = new Request("http://localhost/api/x", { method: "POST", headers: LOCAL_REQUEST_HEADERS });
    await expect(
      audited(req, "keys.forget", { service: "s" }, false, async () => {
        throw new Error("redis: down");
      }),
    ).rejects.toThrow("redis: down");
    const r = auditResponseSchema.parse(await (await GET(new Request("http://localhost/api/audit"))).json());
    expect(r.store).toBe("memory");
    expect(r.entries[0]).toMatchObject({
      action: "keys.forget",
      who: "local",
      result: "error: redis: down",
      matched: null,
    });
  });
});
