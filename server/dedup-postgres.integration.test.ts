/**
 * The PostgreSQL inbox on a real PostgreSQL (a database of this file's own): the store-neutral
 * repository contract on its autocommit statements, and the inbox middleware's guarantee — the
 * handler's side effect and its inbox row commit together or not at all, a copy is swallowed with
 * the Deduplicator's metrics, a copy in flight elsewhere waits for it, expired rows are deleted in
 * bounded batches.
 */
import { Pool } from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ulid } from "ulid";
import {
  HANDLER_INFO_METRIC,
  inbox,
  inboxTransaction,
  InProgressError,
  METRIC_NAMES,
  newMessage,
  PayloadConflictError,
  PayloadFingerprints,
  PostgresInboxRepository,
  type Handler,
  type Message,
} from "@/server/dedup";
import { pgInboxPool } from "@/server/dedup-postgres";
import { repositoryContractSuite } from "@/server/dedup/repository/repository.suite";
import { createOwnDatabase, type OwnDatabase } from "@/server/testing/own-database";
import { registryTotal } from "@/server/testing/counter-total";

let db: OwnDatabase;
let pool: Pool;
let repo: PostgresInboxRepository;

beforeAll(async () => {
  db = await createOwnDatabase("dedup_inbox_");
  pool = new Pool({ connectionString: db.url, max: 6 });
  pool.on("error", () => undefined);
  repo = new PostgresInboxRepository(pgInboxPool(pool), { schema: "inbox_test" });
  await repo.ensureSchema();
  await pool.query(`CREATE TABLE inbox_test.effects (uuid text NOT NULL, note text)`);
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

repositoryContractSuite("PostgreSQL (the inbox table, autocommit statements)", () => {
  const prefix = `contract:dedup:${ulid()}`;
  return {
    repo,
    key: (id) => `${prefix}:${id}`,
    inspect: async (k) => {
      const r = await repo.inspect(k);
      return { value: r?.value ?? null, pttlMs: r?.pttlMs ?? null };
    },
    elapse: (ms) => new Promise((r) => setTimeout(r, ms)),
  };
});

/** A delivery of `uuid` at a Kafka position, as a transport fills it. */
function delivery(uuid: string, payload = "{}", offset = "7"): Message {
  const m = newMessage(uuid, payload);
  m.context = { handler: "h", topic: "t", partition: 0, offset };
  return m;
}

/** Rows of the side-effect table and of the inbox for `uuid`. */
async function rowsOf(uuid: string): Promise<{ effects: number; inbox: number }> {
  const e = await pool.query(`SELECT count(*)::int AS n FROM inbox_test.effects WHERE uuid = $1`, [uuid]);
  const i = await pool.query(`SELECT count(*)::int AS n FROM ${repo.table} WHERE uuid = $1`, [uuid]);
  return { effects: e.rows[0].n as number, inbox: i.rows[0].n as number };
}

/** The payload conflicts counted on `registry`, by what differed. */
async function conflicts(registry: Registry): Promise<{ fields: number; bytes: number }> {
  const by = (difference: string) => registryTotal(registry, METRIC_NAMES.payloadConflicts, { difference });
  return { fields: await by("fields"), bytes: await by("bytes") };
}

/** The handler's side effect: one row in its own table, in the inbox's transaction. */
const writeEffect: Handler = async (msg) => {
  await inboxTransaction(msg).query(`INSERT INTO inbox_test.effects (uuid) VALUES ($1)`, [msg.uuid]);
};

describe("the inbox middleware on PostgreSQL", () => {
  it("runs a UUID's side effect once: the copy is swallowed and counted as the Deduplicator counts it", async () => {
    const registry = new Registry();
    const run = inbox({ repository: repo, service: "svc", registry })(writeEffect);
    const uuid = ulid();
    await run(delivery(uuid));
    await run(delivery(uuid, "{}", "8")); // a re-publish: another position
    await run(delivery(uuid)); // a redelivery: the same position
    expect(await rowsOf(uuid)).toEqual({ effects: 1, inbox: 1 });
    const processed = (result: string) => registryTotal(registry, METRIC_NAMES.processed, { result });
    expect([await processed("success"), await processed("deduplicated")]).toEqual([1, 2]);
    const cause = (c: string) => registryTotal(registry, METRIC_NAMES.duplicatesByCause, { cause: c });
    expect([await cause("republish"), await cause("redelivery")]).toEqual([1, 1]);
  });

  it("a failed handler rolls back its side effect and its inbox row; the retry then commits both once", async () => {
    let fail = true;
    const run = inbox({ repository: repo, service: "svc" })(async (msg) => {
      await writeEffect(msg);
      if (fail) throw new Error("provider down");
    });
    const uuid = ulid();
    await expect(run(delivery(uuid))).rejects.toThrow("provider down");
    expect(await rowsOf(uuid)).toEqual({ effects: 0, inbox: 0 });
    fail = false;
    await run(delivery(uuid));
    await run(delivery(uuid));
    expect(await rowsOf(uuid)).toEqual({ effects: 1, inbox: 1 });
  });

  it("a copy arriving while the first is in flight waits for its commit and is swallowed; past lockTimeoutMs it is in progress", async () => {
    const registry = new Registry();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = inbox({ repository: repo, service: "svc" })(async (msg) => {
      await writeEffect(msg);
      await gate;
    });
    const copy = inbox({ repository: repo, service: "svc", registry, lockTimeoutMs: 200 })(writeEffect);
    const patient = inbox({ repository: repo, service: "svc" })(writeEffect);
    const uuid = ulid();
    const first = slow(delivery(uuid));
    await new Promise((r) => setTimeout(r, 100)); // the first holds its uncommitted row
    await expect(copy(delivery(uuid))).rejects.toBeInstanceOf(InProgressError);
    expect(await registryTotal(registry, METRIC_NAMES.inProgress)).toBe(1);
    const second = patient(delivery(uuid));
    await new Promise((r) => setTimeout(r, 100));
    release();
    await Promise.all([first, second]);
    expect(await rowsOf(uuid)).toEqual({ effects: 1, inbox: 1 });
  });

  it("a copy with the same UUID and another payload is a payload conflict, not a repeat", async () => {
    const registry = new Registry();
    const run = inbox({ repository: repo, service: "svc", registry })(writeEffect);
    const uuid = ulid();
    await run(delivery(uuid, '{"amount":1}'));
    await expect(run(delivery(uuid, '{"amount":2}'))).rejects.toBeInstanceOf(PayloadConflictError);
    // No fields chosen: the bytes are what was compared.
    expect(await conflicts(registry)).toEqual({ fields: 0, bytes: 1 });
    expect(await rowsOf(uuid)).toEqual({ effects: 1, inbox: 1 });
  });

  it("compares copies by the handler's chosen fields: a retry with a new sentAt is a repeat, another amount a conflict of fields", async () => {
    const registry = new Registry();
    const fingerprint = { exclude: ["/sentAt"] };
    const run = inbox({ repository: repo, service: "svc", registry, fingerprint })(writeEffect);
    const uuid = ulid();
    await run(delivery(uuid, '{"amount":10,"sentAt":"10:00:00"}', "1"));
    // A producer retry: re-serialised with a new sentAt and another key order.
    await run(delivery(uuid, '{"sentAt":"10:00:05","amount":10}', "2"));
    expect(await rowsOf(uuid)).toEqual({ effects: 1, inbox: 1 });
    expect(await conflicts(registry)).toEqual({ fields: 0, bytes: 0 });
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "deduplicated" })).toBe(1);
    // The row keeps the fingerprint of the chosen fields, the one the Deduplicator stores for the same option.
    const stored = await pool.query(`SELECT fingerprint FROM ${repo.table} WHERE uuid = $1`, [uuid]);
    expect(stored.rows[0]?.fingerprint).toBe(new PayloadFingerprints(fingerprint).of(Buffer.from('{"amount":10}')));
    await expect(run(delivery(uuid, '{"amount":11,"sentAt":"10:00:00"}', "3"))).rejects.toBeInstanceOf(
      PayloadConflictError,
    );
    expect(await conflicts(registry)).toEqual({ fields: 1, bytes: 0 });
    expect(await rowsOf(uuid)).toEqual({ effects: 1, inbox: 1 });
  });

  it("a copy that is not JSON under chosen fields is compared by its bytes, and the fallback is counted", async () => {
    const registry = new Registry();
    const run = inbox({ repository: repo, service: "svc", registry, fingerprint: { include: ["/amount"] } })(
      writeEffect,
    );
    const uuid = ulid();
    await run(delivery(uuid, '{"amount":10}'));
    await expect(run(delivery(uuid, "amount=10", "8"))).rejects.toBeInstanceOf(PayloadConflictError);
    expect(await conflicts(registry)).toEqual({ fields: 0, bytes: 1 });
    expect(await registryTotal(registry, METRIC_NAMES.fingerprintFallbacks)).toBe(1);
  });

  it("the cleanup deletes only expired rows, in bounded batches, and an expired UUID runs again", async () => {
    const run = inbox({ repository: repo, service: "ttl", ttlMs: 1 })(writeEffect);
    const live = inbox({ repository: repo, service: "ttl" })(writeEffect);
    const expired = Array.from({ length: 5 }, () => ulid());
    for (const u of expired) await run(delivery(u));
    const kept = ulid();
    await live(delivery(kept));
    await new Promise((r) => setTimeout(r, 20));
    expect(await repo.deleteExpired({ batchSize: 2, maxBatches: 2 })).toBe(4);
    expect(await repo.deleteExpired({ batchSize: 2 })).toBeGreaterThanOrEqual(1);
    const left = await pool.query(`SELECT uuid FROM ${repo.table} WHERE service = 'ttl'`);
    expect(left.rows.map((r) => r.uuid)).toEqual([kept]);
    await run(delivery(expired[0]!));
    expect(await rowsOf(expired[0]!)).toEqual({ effects: 2, inbox: 1 });
  });

  it("declares itself in dedup_handler_info with repository postgres-inbox and marking inbox", async () => {
    const registry = new Registry();
    inbox({ repository: repo, service: "svc", registry }).onRegister!({ name: "h", topic: "t" });
    const info = (await registry.getSingleMetric(HANDLER_INFO_METRIC)!.get()).values;
    expect(info.map((v) => v.labels)).toEqual([
      expect.objectContaining({ service: "svc", handler: "h", repository: "postgres-inbox", marking: "inbox" }),
    ]);
  });

  it("a handler outside the inbox cannot reach a transaction", () => {
    expect(() => inboxTransaction(delivery(ulid()))).toThrow(/not being handled under the inbox/);
  });
});
