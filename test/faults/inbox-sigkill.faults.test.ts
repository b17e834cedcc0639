/**
 * The PostgreSQL inbox under SIGKILLs: the consumer process killed at random points of a stream
 * with 5% injected duplicates (re-publications with the same UUID), a second replica joining and
 * leaving at each kill. The handler's one side effect is a row in a table with no unique key,
 * written in the inbox's transaction: a kill between the effect and its commit rolls both back, so
 * the redelivery writes it once. Each UUID has exactly one side-effect row and one inbox row, and
 * neither exists without the other. CI runs a small stream (FAULTS_INBOX_MESSAGES, default 5,000,
 * FAULTS_INBOX_KILLS, default 3); the issue's run is 100,000 messages and 10 kills.
 */
import { Pool } from "pg";
import { describe, expect, it } from "vitest";
import { PostgresInboxRepository } from "@/server/dedup";
import { pgInboxPool } from "@/server/dedup-postgres";
import { KafkaCase, SCALE, scaled } from "./lib/cases";
import { killStorm } from "./lib/kill-storm";
import { sleep, stopAll } from "./lib/procs";
import {
  DATABASE_URL,
  publishStream,
  report,
  startWorker,
  waitUntil,
  WORKER_DEFAULTS,
  type Worker,
} from "./lib/stream";
import { INBOX_EFFECTS, INBOX_TABLE } from "./lib/inbox";

const N = scaled(Number(process.env.FAULTS_INBOX_MESSAGES ?? 5_000));
const KILLS = Number(process.env.FAULTS_INBOX_KILLS ?? 3);
const HANDLER = "on-review-created";

describe(`case inbox: ${KILLS} SIGKILLs of an inbox consumer during a ${N}-message stream with 5% duplicates`, () => {
  const fault = new KafkaCase("inbox", { partitions: 6, handlers: [HANDLER] });
  const { id, topic, dlqTopic, ledger } = fault;
  const workers: Worker[] = [];
  const pool = new Pool({ connectionString: DATABASE_URL, max: 2 });
  pool.on("error", () => undefined);
  const effects = `"${ledger.schema}"."${INBOX_EFFECTS}"`;
  const inbox = `"${ledger.schema}"."${INBOX_TABLE}"`;
  const one = async (sql: string): Promise<number> => Number((await pool.query(sql)).rows[0]?.n ?? 0);
  const effectRows = () => one(`SELECT count(*) AS n FROM ${effects}`);

  fault.hooks(async () => {
    await stopAll(workers);
    await pool.end();
  });

  it("writes each UUID's side effect exactly once, and every inbox row has its side effect and the reverse", async () => {
    const t0 = Date.now();
    await new PostgresInboxRepository(pgInboxPool(pool), { schema: ledger.schema, table: INBOX_TABLE }).ensureSchema();
    await pool.query(`CREATE TABLE ${effects} (handler text NOT NULL, uuid text NOT NULL)`);
    const worker = (replica: string) => {
      const w = startWorker({
        ...WORKER_DEFAULTS,
        sessionTimeoutMs: 6000,
        leaseMs: 5000,
        replica,
        redisUrl: fault.redis.url,
        schema: ledger.schema,
        topic,
        dlqTopic,
        handlers: [{ name: HANDLER, mode: "closed", groupId: `faults.${id}` }],
        store: "inbox",
      });
      workers.push(w);
      return w;
    };
    const main = worker("main-0");
    await main.ready;
    const publishing = publishStream(topic, N, { dupRate: 0.05 });
    publishing.catch(() => undefined);

    const { log } = await killStorm({
      kills: KILLS,
      total: N,
      progress: effectRows,
      unit: "effects",
      main,
      start: worker,
      pollMs: 200,
      joinWithinMs: 1000,
      stayMs: [300, 1500],
    });
    const published = await publishing;
    const unique = new Set(published.ids);
    console.log(`[faults] case inbox: ${log.join("; ")}`);
    const distinct = () => one(`SELECT count(DISTINCT uuid) AS n FROM ${effects}`);
    // Until every UUID has its effect, or nothing moved for 60 s (then the accounting below names the lost).
    let last = -1;
    let movedAt = Date.now();
    await waitUntil(
      async () => {
        const d = await distinct();
        if (d !== last) [last, movedAt] = [d, Date.now()];
        return d >= unique.size || Date.now() - movedAt > 60_000;
      },
      400_000,
      1000,
    );
    await sleep(3000); // a late second write of a duplicate would land now

    const repeated = await one(
      `SELECT count(*) AS n FROM (SELECT uuid FROM ${effects} GROUP BY uuid HAVING count(*) > 1) d`,
    );
    const inboxWithout = await one(
      `SELECT count(*) AS n FROM ${inbox} i WHERE NOT EXISTS (SELECT 1 FROM ${effects} e WHERE e.uuid = i.uuid AND e.handler = i.handler)`,
    );
    const effectWithout = await one(
      `SELECT count(*) AS n FROM ${effects} e WHERE NOT EXISTS (SELECT 1 FROM ${inbox} i WHERE i.uuid = e.uuid AND i.handler = e.handler)`,
    );
    const seen = new Set((await pool.query(`SELECT uuid FROM ${effects}`)).rows.map((r) => String(r.uuid)));
    const lost = [...unique].filter((u) => !seen.has(u));
    const [rows, inboxRows] = [await effectRows(), await one(`SELECT count(*) AS n FROM ${inbox}`)];
    report({
      case: `inbox sigkill x${KILLS} + joins/leaves x${KILLS}`,
      published: unique.size,
      processed: seen.size,
      lost: lost.length,
      duplicateSideEffects: rows - seen.size,
      dlq: 0,
      seconds: (Date.now() - t0) / 1000,
      note: `${published.records} records incl. ${published.duplicates} injected duplicates; ${rows} side-effect rows, ${inboxRows} inbox rows; ${inboxWithout} inbox rows without effect, ${effectWithout} effects without row${SCALE !== 1 ? `; FAULTS_SCALE=${SCALE}` : ""}`,
    });
    expect(lost.slice(0, 5), `${lost.length} published UUIDs without their side effect`).toEqual([]);
    expect(repeated, "UUIDs whose side effect was written more than once").toBe(0);
    expect(rows).toBe(unique.size);
    expect(inboxWithout, "inbox rows whose side effect did not commit").toBe(0);
    expect(effectWithout, "side effects committed without their inbox row").toBe(0);
    expect(inboxRows).toBe(rows);
  });
});
