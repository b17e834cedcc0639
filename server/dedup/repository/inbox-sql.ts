/**
 * The SQL seam of the PostgreSQL inbox: what {@link PostgresInboxRepository} asks of a database
 * client, so the library never imports a driver (server/dedup-postgres.ts adapts `pg`).
 */

/** The rows of one statement. */
export interface InboxSqlResult {
  rows: Array<Record<string, unknown>>;
  /** Rows inserted / updated / deleted / returned; null when the driver does not say. */
  rowCount: number | null;
}

/** One connection (or one open transaction): runs a parameterised statement (`$1`, `$2`, …). */
export interface InboxSqlClient {
  query(text: string, params?: readonly unknown[]): Promise<InboxSqlResult>;
}

/** Options of one {@link InboxSqlPool.transaction}. */
export interface InboxTransactionOptions {
  /**
   * The transaction's `lock_timeout` in ms (`SET LOCAL`): how long a statement waits for a row
   * another open transaction holds — the inbox's claim waits this long for a copy in flight
   * elsewhere before it gives up (55P03). Absent: the server's setting.
   */
  lockTimeoutMs?: number;
}

/** A pool: autocommit statements, and transactions on one connection each. */
export interface InboxSqlPool extends InboxSqlClient {
  /**
   * Runs `fn` in one transaction on one connection: BEGIN, `fn(tx)`, COMMIT; ROLLBACK when `fn`
   * (or the COMMIT) rejects, and the rejection is passed on. Resolves what `fn` resolved.
   */
  transaction<T>(fn: (tx: InboxSqlClient) => Promise<T>, options?: InboxTransactionOptions): Promise<T>;
}

/** The SQLSTATE of a driver error, when it carries one (`pg`: `err.code`). */
export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** SQLSTATE 55P03 `lock_not_available`: a `lock_timeout` expired. */
export const LOCK_NOT_AVAILABLE = "55P03";
