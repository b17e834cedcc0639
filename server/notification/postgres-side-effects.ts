/**
 * The demo's side-effect store on PostgreSQL (real mode): the handler's idempotency table and the
 * push provider's ledger with its idempotency keys. Semantics in ./side-effects.ts.
 */
import { Pool } from "pg";
import type { PushObserver, PushOptions, PushResult, SideEffectStore } from "./side-effects";

const ident = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 50);

/** Options of {@link PostgresSideEffectStore}. */
export interface PostgresSideEffectStoreOptions {
  /** `postgres://user@host:port/db` (DATABASE_URL). Required. */
  connectionString: string;
  /** Schema of the tables (created if missing). A workshop run uses its own and drops it after. @default "public" */
  schema?: string;
  /** Table name prefix. @default "demo" */
  tablePrefix?: string;
  /** Size of the transactions' pool (the ledger has its own, half as big). @default 8 */
  poolSize?: number;
  /** Observer of every push. @default none */
  observe?: PushObserver;
}

/**
 * PostgreSQL store: `<schema>.<prefix>_<handler>_sent (event_id PK)` per handler, the provider's
 * `<schema>.<prefix>_push_ledger (handler, event_id, pushes, attempts)` — `pushes` counts
 * deliveries, `attempts` every call — and its `<schema>.<prefix>_push_keys (handler,
 * idempotency_key) → event_id`, kept for the table's lifetime.
 */
export class PostgresSideEffectStore implements SideEffectStore {
  readonly kind = "postgres" as const;
  private readonly pool: Pool;
  /** The ledger's own pool: a push runs while its handler's transaction holds a connection of `pool`. */
  private readonly ledgerPool: Pool;
  private readonly schema: string;
  private readonly prefix: string;
  private readonly ready = new Map<string, Promise<void>>();

  constructor(private readonly o: PostgresSideEffectStoreOptions) {
    if (!o.connectionString)
      throw new RangeError("PostgresSideEffectStore: connectionString is required (DATABASE_URL)");
    const poolSize = o.poolSize ?? 8;
    if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 50)
      throw new RangeError("PostgresSideEffectStore: poolSize must be an integer in [1, 50]");
    this.schema = ident(o.schema ?? "public");
    this.prefix = ident(o.tablePrefix ?? "demo");
    this.pool = new Pool({ connectionString: o.connectionString, max: poolSize, connectionTimeoutMillis: 5000 });
    this.ledgerPool = new Pool({
      connectionString: o.connectionString,
      max: Math.max(2, Math.ceil(poolSize / 2)),
      connectionTimeoutMillis: 5000,
    });
    // An idle client's error must not crash the process.
    this.pool.on("error", () => undefined);
    this.ledgerPool.on("error", () => undefined);
  }

  private sentTable(handler: string): string {
    return `"${this.schema}"."${this.prefix}_${ident(handler)}_sent"`;
  }

  private get ledgerTable(): string {
    return `"${this.schema}"."${this.prefix}_push_ledger"`;
  }

  private get keysTable(): string {
    return `"${this.schema}"."${this.prefix}_push_keys"`;
  }

  private ensure(handler: string): Promise<void> {
    let p = this.ready.get(handler);
    if (!p) {
      p = (async () => {
        await this.pool.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`).catch(() => undefined);
        await this.pool.query(
          `CREATE TABLE IF NOT EXISTS ${this.sentTable(handler)} (event_id text PRIMARY KEY, sent_at timestamptz NOT NULL DEFAULT now())`,
        );
        await this.pool.query(
          `CREATE TABLE IF NOT EXISTS ${this.ledgerTable} (handler text NOT NULL, event_id text NOT NULL, pushes int NOT NULL, attempts int NOT NULL DEFAULT 1, PRIMARY KEY (handler, event_id))`,
        );
        await this.migrateAttempts();
        await this.pool.query(
          `CREATE TABLE IF NOT EXISTS ${this.keysTable} (handler text NOT NULL, idempotency_key text NOT NULL, event_id text NOT NULL, delivered_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (handler, idempotency_key))`,
        );
      })();
      p.catch(() => this.ready.delete(handler));
      this.ready.set(handler, p);
    }
    return p;
  }

  /**
   * A ledger created before `attempts` existed gets the column, each old row with `attempts =
   * pushes` (every call then delivered). Checked first: ALTER TABLE takes an exclusive lock even
   * when the column exists, and every worker start would stall the others' pushes.
   */
  private async migrateAttempts(): Promise<void> {
    const has = await this.pool.query(
      `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = 'attempts'`,
      [this.schema, `${this.prefix}_push_ledger`],
    );
    if (has.rowCount) return;
    // One simple-protocol query: one implicit transaction; a concurrent migrator waits, then finds the column.
    await this.pool.query(
      `ALTER TABLE ${this.ledgerTable} ADD COLUMN IF NOT EXISTS attempts int NOT NULL DEFAULT 1; UPDATE ${this.ledgerTable} SET attempts = pushes WHERE attempts < pushes`,
    );
  }

  async sendOnce(handler: string, eventId: string, push: () => Promise<void>): Promise<"sent" | "skipped"> {
    await this.ensure(handler);
    const c = await this.pool.connect();
    try {
      await c.query("BEGIN");
      const r = await c.query(
        `INSERT INTO ${this.sentTable(handler)} (event_id) VALUES ($1) ON CONFLICT (event_id) DO NOTHING`,
        [eventId],
      );
      if (r.rowCount === 0) {
        await c.query("COMMIT");
        return "skipped";
      }
      await push();
      await c.query("COMMIT");
      return "sent";
    } catch (e) {
      await c.query("ROLLBACK").catch(() => undefined);
      throw e;
    } finally {
      c.release();
    }
  }

  async push(handler: string, eventId: string, opts: PushOptions = {}): Promise<PushResult> {
    await this.ensure(handler);
    const res =
      opts.idempotencyKey === undefined
        ? await this.deliver(handler, eventId)
        : await this.pushWithKey(handler, eventId, opts.idempotencyKey);
    this.o.observe?.(handler, eventId, res);
    return res;
  }

  /** A call without a key: always delivers. */
  private async deliver(handler: string, eventId: string): Promise<PushResult> {
    const r = await this.ledgerPool.query<{ pushes: number }>(
      `INSERT INTO ${this.ledgerTable} AS l (handler, event_id, pushes, attempts) VALUES ($1, $2, 1, 1)
       ON CONFLICT (handler, event_id) DO UPDATE SET pushes = l.pushes + 1, attempts = l.attempts + 1 RETURNING pushes`,
      [handler, eventId],
    );
    return { duplicate: (r.rows[0]?.pushes ?? 1) > 1, absorbed: false };
  }

  /**
   * A call with a key, in one statement (atomic under concurrent calls with the same key): claim
   * the key; a new key delivers for `eventId`, a known one adds an attempt to the row of the event
   * id it delivered. The no-op `DO UPDATE` makes a known key return its row (and waits for a
   * concurrent claimer to commit); `xmax = 0` holds only for a row this statement inserted.
   */
  private async pushWithKey(handler: string, eventId: string, key: string): Promise<PushResult> {
    const r = await this.ledgerPool.query<{ pushes: number; delivered: boolean }>(
      `WITH k AS (
         INSERT INTO ${this.keysTable} AS k (handler, idempotency_key, event_id) VALUES ($1, $3, $2)
         ON CONFLICT (handler, idempotency_key) DO UPDATE SET idempotency_key = k.idempotency_key
         RETURNING k.event_id, (k.xmax = 0) AS delivered
       )
       INSERT INTO ${this.ledgerTable} AS l (handler, event_id, pushes, attempts)
       SELECT $1, k.event_id, CASE WHEN k.delivered THEN 1 ELSE 0 END, 1 FROM k
       ON CONFLICT (handler, event_id) DO UPDATE SET pushes = l.pushes + EXCLUDED.pushes, attempts = l.attempts + 1
       RETURNING l.pushes, (SELECT delivered FROM k) AS delivered`,
      [handler, eventId, key],
    );
    const row = r.rows[0];
    if (!row)
      throw new Error(
        `PostgresSideEffectStore: the push with key ${key} wrote no ledger row (is ${this.ledgerTable} intact?)`,
      );
    return row.delivered ? { duplicate: row.pushes > 1, absorbed: false } : { duplicate: false, absorbed: true };
  }

  async close(drop = false): Promise<void> {
    try {
      if (drop && this.schema !== "public") await this.pool.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    } finally {
      await this.pool.end().catch(() => undefined);
      await this.ledgerPool.end().catch(() => undefined);
    }
  }
}
