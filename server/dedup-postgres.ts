/**
 * The `pg` adapter of the library's SQL seam (`InboxSqlPool`, server/dedup/repository/inbox-sql.ts):
 * the PostgreSQL inbox's connection, beside the consumers' Redis client (./dedup-redis.ts).
 */
import type { Pool, PoolClient } from "pg";
import type { InboxSqlClient, InboxSqlPool, InboxSqlResult, InboxTransactionOptions } from "@/server/dedup";

function clientOf(c: Pool | PoolClient): InboxSqlClient {
  return {
    query: async (text, params): Promise<InboxSqlResult> => {
      const r = await c.query(text, params ? [...params] : undefined);
      return { rows: r.rows as Array<Record<string, unknown>>, rowCount: r.rowCount };
    },
  };
}

/**
 * An {@link InboxSqlPool} over a `pg` Pool: each transaction on one checked-out connection, BEGIN
 * and its `SET LOCAL lock_timeout` in one round trip. A connection whose ROLLBACK failed is
 * destroyed, not returned to the pool (its transaction state is unknown).
 */
export function pgInboxPool(pool: Pool): InboxSqlPool {
  return {
    ...clientOf(pool),
    async transaction<T>(fn: (tx: InboxSqlClient) => Promise<T>, options: InboxTransactionOptions = {}): Promise<T> {
      const c = await pool.connect();
      let broken: Error | undefined;
      try {
        const lock = options.lockTimeoutMs;
        await c.query(
          lock === undefined ? "BEGIN" : `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.round(lock))}`,
        );
        try {
          const out = await fn(clientOf(c));
          await c.query("COMMIT");
          return out;
        } catch (e) {
          await c.query("ROLLBACK").catch((r: Error) => (broken = r));
          throw e;
        }
      } finally {
        c.release(broken);
      }
    },
  };
}
