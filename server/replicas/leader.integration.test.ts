/**
 * The leader election against the stack's PostgreSQL, in a database of the test's own: of two
 * replicas exactly one leads; when the leader's connection dies (terminated by the server, as when
 * its process is killed) the other takes over within its retry interval, and the old leader steps
 * down instead of exporting beside it.
 */
import { connect, createServer } from "node:net";
import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@/server/testing/net";
import { createOwnDatabase, type OwnDatabase } from "@/server/testing/own-database";
import { LEADER_LOCK_NAMESPACE, LeaderElection } from "./leader";

let db: OwnDatabase;
const elections: LeaderElection[] = [];

beforeAll(async () => {
  db = await createOwnDatabase("he_leader_");
}, 15_000);

afterAll(async () => {
  for (const e of elections) await e.stop();
  await db?.drop();
});

async function until(what: string, ms: number, f: () => boolean): Promise<number> {
  const t0 = Date.now();
  while (!f()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - t0;
}

describe("leader election on a PostgreSQL advisory lock", () => {
  it("elects exactly one of two replicas, and again exactly one when the leader's connection dies", async () => {
    const changes: string[] = [];
    const a = new LeaderElection({
      databaseUrl: db.url,
      retryMs: 300,
      lockKey: 77,
      onChange: (r) => changes.push(`a:${r}`),
    });
    const b = new LeaderElection({
      databaseUrl: db.url,
      retryMs: 300,
      lockKey: 77,
      onChange: (r) => changes.push(`b:${r}`),
    });
    elections.push(a, b);
    await a.start();
    await b.start();
    expect([a.current(), b.current()]).toEqual(["leader", "follower"]);
    // Still one leader after several retries of the follower.
    await new Promise((r) => setTimeout(r, 1000));
    expect([a.current(), b.current()]).toEqual(["leader", "follower"]);

    // The server ends the leader's session (what a killed process' closed socket amounts to): the lock is released.
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    const killed = await admin.query<{ n: string }>(
      "SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = 77 AND granted",
      [LEADER_LOCK_NAMESPACE],
    );
    await admin.end();
    expect(killed.rows[0]?.n).toBe("1");
    // a sees its connection fail and steps down; the lock goes to whichever retries first, once.
    await until("a to see its connection fail", 5000, () => changes.includes("a:follower"));
    await until("one leader again", 5000, () => [a.current(), b.current()].filter((r) => r === "leader").length === 1);
    await new Promise((r) => setTimeout(r, 1000));
    expect([a.current(), b.current()].filter((r) => r === "leader")).toHaveLength(1);
    // Another fleet on the same database (another key) elects its own leader beside them.
    const other = new LeaderElection({ databaseUrl: db.url, retryMs: 300, lockKey: 78 });
    elections.push(other);
    await other.start();
    expect(other.current()).toBe("leader");
  }, 20_000);

  it("when the leader's process ends, the follower leads within its retry interval", async () => {
    const a = new LeaderElection({ databaseUrl: db.url, retryMs: 300, lockKey: 79 });
    const b = new LeaderElection({ databaseUrl: db.url, retryMs: 300, lockKey: 79 });
    elections.push(a, b);
    await a.start();
    await b.start();
    expect([a.current(), b.current()]).toEqual(["leader", "follower"]);
    await a.stop();
    const took = await until("b to lead", 5000, () => b.current() === "leader");
    expect(took).toBeLessThan(1500);
  }, 20_000);

  it("a replica that cannot reach the database acts alone after aloneAfterMs, and follows again once it answers", async () => {
    const holder = new LeaderElection({ databaseUrl: db.url, retryMs: 300, lockKey: 80 });
    elections.push(holder);
    await holder.start();
    // A port where the database is not yet: every connection is refused until the forwarder below listens.
    const port = await freePort();
    const target = new URL(db.url);
    const cut = new LeaderElection({
      databaseUrl: `postgres://postgres@127.0.0.1:${port}${target.pathname}`,
      retryMs: 200,
      aloneAfterMs: 800,
      lockKey: 80,
    });
    elections.push(cut);
    await cut.start();
    expect(cut.current()).toBe("follower");
    const alone = await until("the cut replica to act alone", 5000, () => cut.current() === "single");
    expect(alone).toBeGreaterThanOrEqual(500);
    // The database answers again (a forwarder to it on that port): the lock is held by another replica, so it follows.
    const forward = createServer((sock) => {
      const up = connect(Number(target.port || 5432), target.hostname);
      sock.pipe(up).pipe(sock);
      sock.on("error", () => up.destroy());
      up.on("error", () => sock.destroy());
    });
    await new Promise<void>((r) => forward.listen(port, "127.0.0.1", r));
    try {
      await until("the replica to follow again", 5000, () => cut.current() === "follower");
    } finally {
      await cut.stop();
      forward.close();
    }
    expect(holder.current()).toBe("leader");
  }, 20_000);
});
