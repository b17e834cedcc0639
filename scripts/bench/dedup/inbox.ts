/**
 * What the PostgreSQL inbox costs per message: the same handler (one INSERT of its side effect) in
 * a plain transaction per message, and under the `inbox` middleware (its row's INSERT … ON
 * CONFLICT in the same transaction), and a copy of each swallowed by the inbox. One message at a
 * time on one connection, so the figures are latency per message on this machine's PostgreSQL; the
 * variants alternate message by message (a shared machine's load hits them alike) and each figure
 * is the median over rounds.
 */
import { randomBytes } from "node:crypto";
import { Pool } from "pg";
import { ulid } from "ulid";
import { inbox, inboxTransaction, newMessage, PostgresInboxRepository, type Message } from "@/server/dedup";
import { pgInboxPool } from "@/server/dedup-postgres";

/** The inbox's figures, µs per message. */
export interface InboxFigures {
  /** BEGIN, the effect's INSERT, COMMIT: wall µs per message. */
  plainUs: number;
  /** The same under the inbox: wall µs per message. */
  inboxUs: number;
  /** What the inbox adds (median of the per-round differences), wall µs per message. */
  addedUs: number;
  /** What it adds in this process's CPU, µs per message. */
  addedCpuUs: number;
  /** A copy swallowed by the inbox (its claim finds the committed row): wall µs per message. */
  duplicateUs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Wall and CPU µs of one call of `fn`, added to `into`. */
async function timed(into: { wall: number; cpu: number }, fn: () => Promise<unknown>): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  into.wall += (performance.now() - t0) * 1000;
  const c = process.cpuUsage(c0);
  into.cpu += c.user + c.system;
}

/** Measures the inbox on `databaseUrl` in a schema of its own (dropped after): `rounds` × `n` messages per variant. */
export async function inboxCosts(databaseUrl: string, n = 2000, rounds = 7): Promise<InboxFigures> {
  const schema = `bench_inbox_${randomBytes(4).toString("hex")}`;
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  const sql = pgInboxPool(pool);
  const repository = new PostgresInboxRepository(sql, { schema });
  try {
    await repository.ensureSchema();
    await pool.query(`CREATE TABLE "${schema}".effects (uuid text NOT NULL)`);
    const effect = `INSERT INTO "${schema}".effects (uuid) VALUES ($1)`;
    const run = inbox({ repository, service: "bench" })(async (msg) => {
      await inboxTransaction(msg).query(effect, [msg.uuid]);
    });
    const delivery = (uuid: string): Message => {
      const m = newMessage(uuid, '{"reviewId":"r1"}');
      m.context = { handler: "h", topic: "bench", partition: 0, offset: "1" };
      return m;
    };
    const plain = (uuid: string) => sql.transaction((tx) => tx.query(effect, [uuid]));
    for (let i = 0; i < 500; i++) await Promise.all([plain(ulid()), run(delivery(ulid()))]); // warm-up: JIT, plans
    const f = {
      plain: [] as number[],
      inbox: [] as number[],
      added: [] as number[],
      cpu: [] as number[],
      dup: [] as number[],
    };
    for (let r = 0; r < rounds; r++) {
      // Message by message alternately, so a change of the machine's load hits both variants alike.
      const [p, i, d] = [0, 1, 2].map(() => ({ wall: 0, cpu: 0 }));
      for (let k = 0; k < n; k++) {
        const uuid = ulid();
        await timed(p!, () => plain(ulid()));
        await timed(i!, () => run(delivery(uuid)));
        await timed(d!, () => run(delivery(uuid)));
      }
      f.plain.push(p!.wall / n);
      f.inbox.push(i!.wall / n);
      f.added.push((i!.wall - p!.wall) / n);
      f.cpu.push((i!.cpu - p!.cpu) / n);
      f.dup.push(d!.wall / n);
    }
    return {
      plainUs: median(f.plain),
      inboxUs: median(f.inbox),
      addedUs: median(f.added),
      addedCpuUs: median(f.cpu),
      duplicateUs: median(f.dup),
    };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

/** The inbox's line of bench:dedup's output. */
export function inboxLine(f: InboxFigures): string {
  return `inbox (PostgreSQL, one message at a time): plain transaction ${f.plainUs.toFixed(0)} µs/msg, under the inbox ${f.inboxUs.toFixed(0)} µs/msg → the inbox adds ${f.addedUs.toFixed(0)} µs wall (${f.addedCpuUs.toFixed(1)} µs CPU of this process) per message; a swallowed copy ${f.duplicateUs.toFixed(0)} µs`;
}

/** The inbox's rows of `--json`. */
export function inboxRows(f: InboxFigures) {
  return [
    {
      name: "dedup.inbox_us.added",
      value: +f.addedUs.toFixed(1),
      unit: "µs/msg",
      reference: +f.plainUs.toFixed(1),
      ratio: +(f.inboxUs / f.plainUs).toFixed(3),
    },
    {
      // Throughput one message at a time against the floor: the same handler's INSERT in a plain transaction.
      name: "dedup.inbox_vs_floor",
      value: +(f.plainUs / f.inboxUs).toFixed(4),
      unit: "ratio",
      reference: Math.round(1e6 / f.plainUs),
      ratio: +(f.plainUs / f.inboxUs).toFixed(4),
      detail: { inboxMsgsPerSec: Math.round(1e6 / f.inboxUs), floorMsgsPerSec: Math.round(1e6 / f.plainUs) },
    },
    { name: "dedup.inbox_us.total", value: +f.inboxUs.toFixed(1), unit: "µs/msg" },
    { name: "dedup.inbox_us.added_cpu", value: +f.addedCpuUs.toFixed(2), unit: "µs/msg" },
    { name: "dedup.inbox_us.duplicate", value: +f.duplicateUs.toFixed(1), unit: "µs/msg" },
  ];
}
