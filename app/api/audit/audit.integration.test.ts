/**
 * The audit trail's store: PostgreSQL is migrated at start-up (idempotent) and an unreachable
 * `DATABASE_URL` is a start-up error naming the variable (and `GET /api/audit` a 503); without it the trail is in
 * memory and `GET /api/audit` says so. A failed action is recorded with its error.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { GET } from "./route";
import { auditResponseSchema } from "@/lib/api/audit";
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

  it("migrates twice without harm and keeps entries across a new connection", async () => {
    const table = `act_audit_${randomBytes(3).toString("hex")}`;
    const a = new PostgresAuditStore(TEST_DATABASE_URL, table);
    try {
      await a.migrate();
      await a.migrate();
      await a.append({ who: "local", action: "dlq.redrive", filter: { uuids: ["u1"] }, dryRun: false, matched: 1, changed: 1, result: "ok" });
      const b = new PostgresAuditStore(TEST_DATABASE_URL, table);
      expect(await b.list({ limit: 10 })).toMatchObject([{ who: "local", action: "dlq.redrive", filter: { uuids: ["u1"] }, matched: 1, changed: 1 }]);
      await b.close();
    } finally {
      await a.drop();
      await a.close();
    }
  });

  it("in memory without DATABASE_URL (the answer says so), recording a failed action with its error", async () => {
    g.__dedupHealthConfig = parseConfig({});
    await setAuditStore(null);
    expect(await initAudit()).toBe("memory");
    process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
    const req = new Request("http://localhost/api/x", { method: "POST", headers: LOCAL_REQUEST_HEADERS });
    await expect(audited(req, "keys.forget", { service: "s" }, false, async () => { throw new Error("redis: down"); })).rejects.toThrow("redis: down");
    const r = auditResponseSchema.parse(await (await GET(new Request("http://localhost/api/audit"))).json());
    expect(r.store).toBe("memory");
    expect(r.entries[0]).toMatchObject({ action: "keys.forget", who: "local", result: "error: redis: down", matched: null });
  });
});
