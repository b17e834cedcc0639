/**
 * Where the audit trail is kept: PostgreSQL when `DATABASE_URL` is set (one table, created at
 * start-up, survives restarts), else a bounded list in this process's memory.
 */
import { Pool } from "pg";
import type { AuditEntry } from "@/lib/api/audit";
import { auditRecord, auditText } from "./sanitize";

/** An entry before the store numbered it (no `scope`: the whole app; no `principal`: the name says all). */
export type AuditInput = Omit<AuditEntry, "id" | "at" | "scope" | "touched" | "principal"> & {
  at?: Date;
  scope?: Readonly<Record<string, string>>;
  touched?: AuditEntry["touched"];
  principal?: AuditEntry["principal"];
};

/** How an entry written as `started` ends: its counts, result, and what only its answer knew. */
export type AuditCompletion = Pick<AuditEntry, "matched" | "changed" | "result"> & {
  scope?: Readonly<Record<string, string>>;
  touched?: AuditEntry["touched"];
};

/** `e` as the trail may keep it: every string cleaned of control characters and bounded (./sanitize.ts). */
export function cleanInput(e: AuditInput): AuditInput {
  return {
    ...e,
    who: auditText(e.who, 200),
    action: auditText(e.action, 100),
    result: auditText(e.result),
    filter: auditRecord(e.filter),
    ...(e.scope ? { scope: auditRecord(e.scope) } : {}),
    ...(e.touched ? { touched: auditRecord(e.touched) } : {}),
    ...(e.principal ? { principal: auditRecord(e.principal) } : {}),
  };
}

function cleanCompletion(c: AuditCompletion): AuditCompletion {
  return {
    ...c,
    result: auditText(c.result),
    ...(c.scope ? { scope: auditRecord(c.scope) } : {}),
    ...(c.touched ? { touched: auditRecord(c.touched) } : {}),
  };
}

/**
 * Which entries {@link AuditStore.list} reads, newest first: by action, by time (`from`/`to`
 * inclusive), only those that changed something (`changesOnly`: no dry run), only those concerning
 * a service / handler (entries with no such scope concern every one).
 */
export interface AuditListQuery {
  action?: string;
  limit: number;
  from?: Date;
  to?: Date;
  changesOnly?: boolean;
  service?: string;
  handler?: string;
  /** Only entries by this user (`who`). */
  who?: string;
}

/** Whether `e` is one of the entries `q` asks for (the memory store's filter; PostgreSQL's WHERE says the same). */
export function auditMatches(e: AuditEntry, q: AuditListQuery): boolean {
  const at = Date.parse(e.at);
  if (q.action !== undefined && e.action !== q.action) return false;
  if ((q.from && at < q.from.getTime()) || (q.to && at > q.to.getTime())) return false;
  if (q.changesOnly && (e.dryRun || e.result.startsWith("refused"))) return false;
  if (q.who !== undefined && e.who !== q.who) return false;
  for (const k of ["service", "handler"] as const)
    if (q[k] !== undefined && e.scope[k] !== undefined && e.scope[k] !== q[k]) return false;
  return true;
}

/** The two methods every audit store has. */
export interface AuditStore {
  readonly kind: "postgres" | "memory";
  /** Resolves when the store can keep an entry now; rejects with the reason otherwise. */
  ready(): Promise<void>;
  append(e: AuditInput): Promise<AuditEntry>;
  /** Completes the entry `id` (written `started`) with its outcome. */
  complete(id: string, c: AuditCompletion): Promise<void>;
  /** Newest first. */
  list(q: AuditListQuery): Promise<AuditEntry[]>;
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
    const { at, scope, touched, principal, ...rest } = cleanInput(e);
    const entry: AuditEntry = {
      id: String(this.next++),
      at: (at ?? new Date()).toISOString(),
      ...rest,
      principal: { ...principal },
      scope: { ...scope },
      touched: { ...touched },
    };
    this.entries.push(entry);
    if (this.entries.length > MEMORY_AUDIT_MAX) this.entries.shift();
    return entry;
  }

  async complete(id: string, c: AuditCompletion): Promise<void> {
    const e = this.entries.find((x) => x.id === id);
    if (!e) return;
    const { scope, touched, ...rest } = cleanCompletion(c);
    Object.assign(e, rest, scope ? { scope: { ...scope } } : {}, touched ? { touched: { ...touched } } : {});
  }

  async list(q: AuditListQuery): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    for (let i = this.entries.length - 1; i >= 0 && out.length < q.limit; i--)
      if (auditMatches(this.entries[i]!, q)) out.push(this.entries[i]!);
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
  scope: Record<string, string>;
  touched: AuditEntry["touched"] | null;
  principal: AuditEntry["principal"] | null;
}

/** The trail in PostgreSQL: `migrate()` creates the table (and its index) when missing. */
export class PostgresAuditStore implements AuditStore {
  readonly kind = "postgres" as const;
  private readonly pool: Pool;
  private readonly table: string;
  private migrated: Promise<void> | null = null;

  constructor(connectionString: string, table = AUDIT_TABLE) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table))
      throw new RangeError(`audit table: expected a lower-case SQL name, got ${table}`);
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
    // Tables made before entries carried a scope: every old entry concerns the whole app.
    await this.pool.query(`ALTER TABLE ${this.table} ADD COLUMN IF NOT EXISTS scope jsonb NOT NULL DEFAULT '{}'`);
    // Tables made before entries kept what an action touched: old entries list nothing.
    await this.pool.query(`ALTER TABLE ${this.table} ADD COLUMN IF NOT EXISTS touched jsonb NOT NULL DEFAULT '{}'`);
    // Tables made before entries said who beyond a name (source, e-mail, role, address): old entries say nothing more.
    await this.pool.query(`ALTER TABLE ${this.table} ADD COLUMN IF NOT EXISTS principal jsonb NOT NULL DEFAULT '{}'`);
    await this.pool.query(
      `CREATE INDEX IF NOT EXISTS ${this.table.replace(/"$/, '_at"').split(".")[1]} ON ${this.table} (at DESC)`,
    );
  }

  async append(input: AuditInput): Promise<AuditEntry> {
    await this.migrate();
    const e = cleanInput(input);
    const r = await this.pool.query<Row>(
      `INSERT INTO ${this.table} (at, who, action, filter, dry_run, matched, changed, result, scope, touched, principal) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [
        e.at ?? new Date(),
        e.who,
        e.action,
        JSON.stringify(e.filter),
        e.dryRun,
        e.matched,
        e.changed,
        e.result,
        JSON.stringify(e.scope ?? {}),
        JSON.stringify(e.touched ?? {}),
        JSON.stringify(e.principal ?? {}),
      ],
    );
    return toEntry(r.rows[0]!);
  }

  async complete(id: string, input: AuditCompletion): Promise<void> {
    await this.migrate();
    const c = cleanCompletion(input);
    await this.pool.query(
      `UPDATE ${this.table} SET matched = $2, changed = $3, result = $4, scope = COALESCE($5::jsonb, scope), touched = COALESCE($6::jsonb, touched) WHERE id = $1`,
      [
        id,
        c.matched,
        c.changed,
        c.result,
        c.scope ? JSON.stringify(c.scope) : null,
        c.touched ? JSON.stringify(c.touched) : null,
      ],
    );
  }

  async list(q: AuditListQuery): Promise<AuditEntry[]> {
    await this.migrate();
    const where: string[] = [];
    const args: unknown[] = [];
    const arg = (v: unknown) => `$${args.push(v)}`;
    if (q.action !== undefined) where.push(`action = ${arg(q.action)}`);
    if (q.from) where.push(`at >= ${arg(q.from)}`);
    if (q.to) where.push(`at <= ${arg(q.to)}`);
    if (q.changesOnly) where.push("NOT dry_run AND result NOT LIKE 'refused%'");
    if (q.who !== undefined) where.push(`who = ${arg(q.who)}`);
    for (const k of ["service", "handler"] as const)
      if (q[k] !== undefined) where.push(`(scope->>'${k}' IS NULL OR scope->>'${k}' = ${arg(q[k])})`);
    const sql = `SELECT * FROM ${this.table}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY at DESC, id DESC LIMIT ${arg(q.limit)}`;
    return (await this.pool.query<Row>(sql, args)).rows.map(toEntry);
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
  return {
    id: String(r.id),
    at: r.at.toISOString(),
    who: r.who,
    action: r.action,
    filter: r.filter,
    dryRun: r.dry_run,
    matched: r.matched,
    changed: r.changed,
    result: r.result,
    principal: r.principal ?? {},
    scope: r.scope ?? {},
    touched: r.touched ?? {},
  };
}
