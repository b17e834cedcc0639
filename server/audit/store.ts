/**
 * Where the audit trail is kept: PostgreSQL when `DATABASE_URL` is set (one table, created at
 * start-up, survives restarts), else a bounded list in this process's memory.
 */
import { Pool } from "pg";
import type { AuditEntry } from "@/lib/api/audit";

/** An entry before the store numbered it. */
export type AuditInput = Omit<AuditEntry, "id" | "at"> & { at?: Date };

/** The two methods every audit store has. */
export interface AuditStore {
  readonly kind: "postgres" | "memory";
  /** Resolves when the store can keep an entry now; rejects with the reason otherwise. */
  ready(): Promise<void>;
  append(e: AuditInput): Promise<AuditEntry>;
  /** Newest first. */
  list(q: { action?: string; limit: number }): Promise<AuditEntry[]>;
  close(): Promise<void>;
}

/** Entries the in-memory store keeps (the oldest are dropped beyond). */
export const MEMORY_AUDIT_MAX = 10_000;

/** The trail in process memory (embedded mode, or no `DATABASE_URL`): lost at restart. */
export class MemoryAuditStore implements AuditStore {
  readonly kind = "memory" as const;
  private readonly entries: AuditEntry[] = [];
  private next = 1;

  async ready(): Promise<void> {}

  async append(e: AuditInput): Promise<AuditEntry> {
    const { at, ...rest } = e;
    const entry: AuditEntry = { id: String(this.next++), at: (at ?? new Date()).toISOString(), ...rest };
    this.entries.push(entry);
    if (this.entries.length > MEMORY_AUDIT_MAX) this.entries.shift();
    return entry;
  }

  async list(q: { action?: string; limit: number }): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    for (let i = this.entries.length - 1; i >= 0 && out.length < q.limit; i--) if (!q.action || this.entries[i]!.action === q.action) out.push(this.entries[i]!);
    return out;
  }

  async close(): Promise<void> {}
}

/** Default table of the PostgreSQL trail. */
export const AUDIT_TABLE = "dedup_health_audit";

interface Row {
  id: string;
  at: Date;
  who: string;
  action: string;
  filter: Record<string, unknown>;
  dry_run: boolean;
  matched: number | null;
  changed: number | null;
  result: string;
}

/** The trail in PostgreSQL: `migrate()` creates the table (and its index) when missing. */
export class PostgresAuditStore implements AuditStore {
  readonly kind = "postgres" as const;
  private readonly pool: Pool;
  private readonly table: string;
  private migrated: Promise<void> | null = null;

  constructor(connectionString: string, table = AUDIT_TABLE) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table)) throw new RangeError(`audit table: expected a lower-case SQL name, got ${table}`);
    this.table = `"public"."${table}"`;
    this.pool = new Pool({ connectionString, max: 2, connectionTimeoutMillis: 5000 });
    this.pool.on("error", () => undefined);
  }

  /**
   * Creates the table if missing (idempotent); rejects when the database cannot be reached. Reads
   * and writes run it first (once it succeeded), so a database that was down at start-up is
   * migrated when it comes back.
   */
  migrate(): Promise<void> {
    this.migrated ??= this.createTable().catch((e: unknown) => {
      this.migrated = null;
      throw e;
    });
    return this.migrated;
  }

  /** The table is there and the database answers now (one round trip: `SELECT 1`). */
  async ready(): Promise<void> {
    await this.migrate();
    await this.pool.query("SELECT 1");
  }

  private async createTable(): Promise<void> {
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT now(),
      who text NOT NULL,
      action text NOT NULL,
      filter jsonb NOT NULL DEFAULT '{}',
      dry_run boolean NOT NULL DEFAULT false,
      matched integer,
      changed integer,
      result text NOT NULL
    )`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS ${this.table.replace(/"$/, "_at\"").split(".")[1]} ON ${this.table} (at DESC)`);
  }

  async append(e: AuditInput): Promise<AuditEntry> {
    await this.migrate();
    const r = await this.pool.query<Row>(
      `INSERT INTO ${this.table} (at, who, action, filter, dry_run, matched, changed, result) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [e.at ?? new Date(), e.who, e.action, JSON.stringify(e.filter), e.dryRun, e.matched, e.changed, e.result],
    );
    return toEntry(r.rows[0]!);
  }

  async list(q: { action?: string; limit: number }): Promise<AuditEntry[]> {
    await this.migrate();
    const r = q.action
      ? await this.pool.query<Row>(`SELECT * FROM ${this.table} WHERE action = $1 ORDER BY at DESC, id DESC LIMIT $2`, [q.action, q.limit])
      : await this.pool.query<Row>(`SELECT * FROM ${this.table} ORDER BY at DESC, id DESC LIMIT $1`, [q.limit]);
    return r.rows.map(toEntry);
  }

  /** Drops the table (tests). */
  async drop(): Promise<void> {
    await this.pool.query(`DROP TABLE IF EXISTS ${this.table}`);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

function toEntry(r: Row): AuditEntry {
  return { id: String(r.id), at: r.at.toISOString(), who: r.who, action: r.action, filter: r.filter, dryRun: r.dry_run, matched: r.matched, changed: r.changed, result: r.result };
}
