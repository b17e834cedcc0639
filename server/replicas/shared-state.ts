/**
 * The state every dashboard replica shares, in the PostgreSQL database of `DATABASE_URL`: the
 * event log behind the chart markers (rebalances, notifications: `dedup_health_events`) and named
 * documents that must outlive a process (the memory-loss baselines: `dedup_health_state`). Both
 * tables are made at start-up like the audit table. Without `DATABASE_URL` there is no pool and
 * callers keep the state in process memory.
 */
import { Pool } from "pg";

/** Table of the shared event log. */
export const EVENTS_TABLE = "dedup_health_events";
/** Table of named state documents (one JSON value per name). */
export const STATE_TABLE = "dedup_health_state";
/** Events kept: older rows are deleted when newer ones are written beyond this many. */
export const MAX_SHARED_EVENTS = 20_000;

/** One event row as stored. */
export interface SharedEvent {
  at: number;
  kind: string;
  title: string;
  labels: Record<string, string>;
}

/**
 * The shared tables of one database. Named documents are kept per `fleet` (./fleet.ts: the replicas
 * of one dashboard share one id), so two dashboards watching different stores on one database do
 * not overwrite each other's baselines.
 */
export class SharedState {
  private readonly pool: Pool;
  private made: Promise<void> | null = null;
  private writes = 0;

  constructor(
    connectionString: string,
    readonly fleet = "default",
  ) {
    this.pool = new Pool({ connectionString, max: 2, connectionTimeoutMillis: 3000, idleTimeoutMillis: 30_000 });
    this.pool.on("error", () => undefined);
  }

  /** Creates both tables when missing (idempotent); retried on the next call after a failure. */
  migrate(): Promise<void> {
    this.made ??= this.createTables().catch((e: unknown) => {
      this.made = null;
      throw e;
    });
    return this.made;
  }

  private async createTables(): Promise<void> {
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${EVENTS_TABLE} (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL,
      kind text NOT NULL,
      title text NOT NULL,
      labels jsonb NOT NULL DEFAULT '{}'
    )`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS ${EVENTS_TABLE}_at ON ${EVENTS_TABLE} (at)`);
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (name text PRIMARY KEY, value jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
    );
  }

  /** Appends one event; every 500th write trims the log to {@link MAX_SHARED_EVENTS}. */
  async appendEvent(e: SharedEvent): Promise<void> {
    await this.migrate();
    await this.pool.query(`INSERT INTO ${EVENTS_TABLE} (at, kind, title, labels) VALUES ($1, $2, $3, $4)`, [
      new Date(e.at),
      e.kind,
      e.title,
      JSON.stringify(e.labels),
    ]);
    if (++this.writes % 500 === 0)
      await this.pool.query(`DELETE FROM ${EVENTS_TABLE} WHERE id <= (SELECT max(id) FROM ${EVENTS_TABLE}) - $1`, [
        MAX_SHARED_EVENTS,
      ]);
  }

  /** Events with `from <= at <= to` (epoch ms), oldest first, at most `limit` (the newest). */
  async eventsBetween(from: number, to: number, limit: number): Promise<SharedEvent[]> {
    await this.migrate();
    const r = await this.pool.query<{ at: Date; kind: string; title: string; labels: Record<string, string> }>(
      `SELECT at, kind, title, labels FROM (SELECT * FROM ${EVENTS_TABLE} WHERE at >= $1 AND at <= $2 ORDER BY at DESC, id DESC LIMIT $3) t ORDER BY at, id`,
      [new Date(from), new Date(to), limit],
    );
    return r.rows.map((x) => ({ at: x.at.getTime(), kind: x.kind, title: x.title, labels: x.labels ?? {} }));
  }

  /** The document `name` of this fleet, or null when none was saved. */
  async load<T>(name: string): Promise<{ value: T; updatedAt: number } | null> {
    await this.migrate();
    const r = await this.pool.query<{ value: T; updated_at: Date }>(
      `SELECT value, updated_at FROM ${STATE_TABLE} WHERE name = $1`,
      [`${this.fleet}/${name}`],
    );
    const row = r.rows[0];
    return row ? { value: row.value, updatedAt: row.updated_at.getTime() } : null;
  }

  /** Saves (replaces) the document `name` of this fleet. */
  async save(name: string, value: unknown): Promise<void> {
    await this.migrate();
    await this.pool.query(
      `INSERT INTO ${STATE_TABLE} (name, value, updated_at) VALUES ($1, $2, now()) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [`${this.fleet}/${name}`, JSON.stringify(value)],
    );
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

type G = typeof globalThis & { __dedupHealthShared?: SharedState | null };

/** The process's shared state, `null` without `DATABASE_URL` (set by {@link initSharedState}). */
export function sharedState(): SharedState | null {
  return (globalThis as G).__dedupHealthShared ?? null;
}

/**
 * Start-up: with `databaseUrl`, opens the shared state of `fleet` and makes its tables. **Rejects
 * when the database does not answer** (the state is kept and the tables made at the first use that succeeds).
 */
export async function initSharedState(databaseUrl: string | undefined, fleet?: string): Promise<void> {
  const g = globalThis as G;
  if (g.__dedupHealthShared !== undefined) return;
  g.__dedupHealthShared = databaseUrl ? new SharedState(databaseUrl, fleet) : null;
  await g.__dedupHealthShared?.migrate();
}

/** Replaces (tests) or, with `null`, closes and forgets the process's shared state. */
export async function setSharedState(s: SharedState | null): Promise<void> {
  const g = globalThis as G;
  const old = g.__dedupHealthShared;
  if (s) g.__dedupHealthShared = s;
  else delete g.__dedupHealthShared;
  if (old && old !== s) await old.close();
}
