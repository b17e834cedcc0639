/**
 * The PostgreSQL inbox under the crash storm: the handler's side effect is a row in a table with no
 * unique key (a second write is a second row), written in the inbox's transaction beside the
 * event's inbox row. A replica that dies after writing it never commits: its transaction rolls back
 * as PostgreSQL rolls back a dead process's, and the successor writes the row once. In its own
 * schema `wsi_<runId>`, dropped after the run.
 */
import { Pool } from "pg";
import { HOUR_MS } from "@/names/keys";
import { defaultStack, inbox, inboxTransaction, PostgresInboxRepository } from "@/server/dedup";
import { pgInboxPool } from "@/server/dedup-postgres";
import { FAST_RETRY } from "../scenario-context";
import type { ScenarioContext } from "../scenario-context";
import type { GuaranteeSpec } from "./rig";
import { afterEffect, ReplicaCrashed, startReplica, STORM, stormExtras } from "./storm";

/** The run's inbox tables: its pool, the inbox, the quoted effects table, and how to drop them. */
interface InboxTables {
  pool: Pool;
  repository: PostgresInboxRepository;
  effects: string;
  drop(): Promise<void>;
}

/** The run's inbox tables in its own schema `wsi_<runId>`, or why PostgreSQL cannot hold them. */
async function inboxTables(ctx: ScenarioContext): Promise<InboxTables | { notRun: string }> {
  const url = ctx.env.databaseUrl;
  if (!url) return { notRun: "no PostgreSQL configured (set DATABASE_URL)" };
  const pool = new Pool({ connectionString: url, max: 6, connectionTimeoutMillis: 3000 });
  pool.on("error", () => undefined);
  try {
    await pool.query("SELECT 1");
  } catch (e) {
    await pool.end().catch(() => undefined);
    return { notRun: `PostgreSQL (DATABASE_URL) unreachable: ${(e as Error).message || String(e)}` };
  }
  const schema = `wsi_${ctx.runId}`;
  const effects = `"${schema}"."effects"`;
  const repository = new PostgresInboxRepository(pgInboxPool(pool), { schema, table: "inbox" });
  const drop = async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end().catch(() => undefined);
  };
  try {
    await repository.ensureSchema();
    await pool.query(`CREATE TABLE ${effects} (handler text NOT NULL, uuid text NOT NULL)`);
  } catch (e) {
    await drop();
    throw e;
  }
  return { pool, repository, effects, drop };
}

/** The PostgreSQL inbox, or why it cannot run: no `DATABASE_URL`, or PostgreSQL not answering. */
export const INBOX_GUARANTEE: GuaranteeSpec = {
  guarantee: "inbox",
  setup: () => "PostgreSQL inbox: the side-effect row and the inbox row in one transaction",
  async open(ctx, reads) {
    const tables = await inboxTables(ctx);
    if (!("pool" in tables)) return tables;
    const { pool, repository, effects } = tables;
    const groupId = `${ctx.groupId}.inbox`;
    const handlerName = `${ctx.scenario}.inbox`;
    const transport = ctx.env.transport;
    return {
      short: "inbox",
      async startReplica(life, probe) {
        const extras = stormExtras(life, probe);
        const middleware = [
          ...defaultStack({
            dedup: null,
            retry: FAST_RETRY,
            dlqPublisher: extras.wrapDlqPublisher(ctx.publisher),
            dlqTopic: ctx.dlqTopic,
            outermost: extras.outermost,
            beforeDedup: extras.beforeDedup,
          }),
          inbox({ repository, service: ctx.env.service, ttlMs: HOUR_MS, registry: ctx.env.registry }),
        ];
        const subscriber = transport.subscriber({
          groupId,
          replica: life.name,
          handler: handlerName,
          chunkSize: STORM.chunkSize,
          beforeCommit: life.beforeCommit,
          dlq: { publisher: ctx.publisher, topic: ctx.dlqTopic },
        });
        return startReplica(life, {
          handlerName,
          topic: ctx.topic,
          subscriber,
          middleware,
          handler: probe.wrapHandler(async (msg) => {
            // A dead process sends no COMMIT: whatever this transaction holds rolls back.
            if (life.dead) throw new ReplicaCrashed(life.name);
            await inboxTransaction(msg).query(`INSERT INTO ${effects} (handler, uuid) VALUES ($1, $2)`, [
              handlerName,
              msg.uuid,
            ]);
            if (afterEffect(life, probe, msg, "its transaction committed") || life.dead)
              throw new ReplicaCrashed(life.name);
          }),
        });
      },
      committed: () => reads.committed(groupId, ctx.topic),
      inputRecords: () => reads.records(ctx.topic),
      count: async () => {
        const r = await pool.query(`SELECT uuid, count(*)::int AS n FROM ${effects} GROUP BY uuid`);
        return {
          counts: new Map(r.rows.map((row) => [String(row.uuid), Number(row.n)])),
          countedBy: `rows of ${effects} (no unique key: a second write is a second row)`,
        };
      },
      cleanup: async () => {
        await tables.drop();
        await reads.deleteGroups([groupId]);
      },
    };
  },
};
