import { randomBytes } from "node:crypto";
import { Pool } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresSideEffectStore } from "./postgres-side-effects";

/**
 * The PostgreSQL push provider's idempotency key, and the migration of a ledger created before
 * `attempts` existed. Real PostgreSQL (`npm run stack:up` / 127.0.0.1:5432), a random schema per run.
 */
const DATABASE_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const schema = `setest_${randomBytes(4).toString("hex")}`;
const admin = new Pool({ connectionString: DATABASE_URL, max: 2 });
const stores: PostgresSideEffectStore[] = [];
const store = (tablePrefix: string) => {
  const s = new PostgresSideEffectStore({ connectionString: DATABASE_URL, schema, tablePrefix, poolSize: 4 });
  stores.push(s);
  return s;
};
const row = async (prefix: string, handler: string, eventId: string) =>
  (
    await admin.query<{ pushes: number; attempts: number }>(
      `SELECT pushes, attempts FROM "${schema}"."${prefix}_push_ledger" WHERE handler = $1 AND event_id = $2`,
      [handler, eventId],
    )
  ).rows[0];

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
});

describe("PostgresSideEffectStore push provider", () => {
  it("without a key every call delivers; with a delivered key nothing is delivered again (attempts counts every call)", async () => {
    const s = store("k");
    expect(await s.push("h", "e1")).toEqual({ duplicate: false, absorbed: false });
    expect(await s.push("h", "e1")).toEqual({ duplicate: true, absorbed: false });
    expect(await row("k", "h", "e1")).toEqual({ pushes: 2, attempts: 2 });

    expect(await s.push("h", "e2", { idempotencyKey: "e2" })).toEqual({ duplicate: false, absorbed: false });
    expect(await s.push("h", "e2", { idempotencyKey: "e2" })).toEqual({ duplicate: false, absorbed: true });
    expect(await row("k", "h", "e2")).toEqual({ pushes: 1, attempts: 2 });
    // Per handler; a new key for a delivered event id delivers again.
    expect(await s.push("other", "e2", { idempotencyKey: "e2" })).toEqual({ duplicate: false, absorbed: false });
    expect(await s.push("h", "e2", { idempotencyKey: "another" })).toEqual({ duplicate: true, absorbed: false });
    expect(await row("k", "h", "e2")).toEqual({ pushes: 2, attempts: 3 });
  });

  it("concurrent calls with one key deliver exactly once", async () => {
    const s = store("c");
    const results = await Promise.all(Array.from({ length: 8 }, () => s.push("h", "e", { idempotencyKey: "e" })));
    expect(results.filter((r) => !r.absorbed)).toHaveLength(1);
    expect(results.filter((r) => r.duplicate)).toHaveLength(0);
    expect(await row("c", "h", "e")).toEqual({ pushes: 1, attempts: 8 });
  });

  it("a ledger created without `attempts` gets the column (old rows: attempts = pushes) and keeps working", async () => {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await admin.query(
      `CREATE TABLE "${schema}"."old_push_ledger" (handler text NOT NULL, event_id text NOT NULL, pushes int NOT NULL, PRIMARY KEY (handler, event_id))`,
    );
    await admin.query(`INSERT INTO "${schema}"."old_push_ledger" VALUES ('h', 'before', 3)`);
    const s = store("old");
    expect(await s.push("h", "before", { idempotencyKey: "before" })).toEqual({ duplicate: true, absorbed: false });
    expect(await row("old", "h", "before")).toEqual({ pushes: 4, attempts: 4 });
    expect(await s.push("h", "before", { idempotencyKey: "before" })).toEqual({ duplicate: false, absorbed: true });
    expect(await row("old", "h", "before")).toEqual({ pushes: 4, attempts: 5 });
    // A second store on the migrated table (a restarted worker) finds the column and migrates nothing.
    expect(await store("old").push("h", "new")).toEqual({ duplicate: false, absorbed: false });
    expect(await row("old", "h", "new")).toEqual({ pushes: 1, attempts: 1 });
  });
});
