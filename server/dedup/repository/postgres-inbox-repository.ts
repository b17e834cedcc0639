/**
 * The PostgreSQL inbox: the dedup key is a row `(service, handler, uuid) → position, fingerprint,
 * state, expires_at` written in the handler's own transaction, so the `done` mark commits with the
 * side effect or not at all (docs/LIBRARY.md "The PostgreSQL inbox"). The `inbox` middleware
 * (../deduplicator/inbox.ts) opens the transaction; this file owns the table and its statements.
 */
import { doneValue } from "./stored-value";
import type { InboxSqlClient, InboxSqlPool } from "./inbox-sql";
import type { ClaimReply, ClaimRequest, CompareAndSetRequest, DedupRepository, MarkDoneRequest } from "./repository";

/** Options of {@link PostgresInboxRepository}. */
export interface PostgresInboxRepositoryOptions {
  /** Schema of the inbox table. @default "public" */
  schema?: string;
  /** Name of the inbox table. @default "dedup_inbox" */
  table?: string;
}

/** Defaults of {@link PostgresInboxRepositoryOptions}. */
export const DEFAULT_POSTGRES_INBOX_OPTIONS = {
  schema: "public",
  table: "dedup_inbox",
} as const satisfies Required<PostgresInboxRepositoryOptions>;

/** One inbox row to claim: the handler's delivery of `uuid`. */
export interface InboxClaim {
  service: string;
  handler: string;
  uuid: string;
  /** `topic:partition:offset` of the delivery, when the transport gave one. */
  position?: string;
  /** The payload's fingerprint (`payloadFingerprint`). */
  fingerprint?: string;
  /** How long the row keeps later copies out, ms. */
  ttlMs: number;
}

/** The row a claim found: the `state` is a `done` value of ./stored-value.ts (`done:<position>#<fingerprint>`). */
export interface InboxHeld {
  state: string;
  position: string | null;
  fingerprint: string | null;
}

/** Options of {@link PostgresInboxRepository.deleteExpired}. */
export interface InboxCleanupOptions {
  /** Rows deleted per statement (each statement is one short transaction). @default 1000 */
  batchSize?: number;
  /** Statements per call at most: the job's bound. @default 100 */
  maxBatches?: number;
}

const IDENT = /^[a-z_][a-z0-9_]{0,50}$/;
const TTL = "now() + $7::bigint * interval '1 millisecond'";

/**
 * The inbox table on PostgreSQL, through the {@link InboxSqlPool} seam (`pgInboxPool` in
 * server/dedup-postgres.ts). {@link claimIn} is the inbox's claim in a caller's transaction; the
 * {@link DedupRepository} methods run the same row as autocommit statements (the store-neutral
 * contract, and a Deduplicator that wants a SQL store outside the handler's transaction).
 *
 * **Keys of the DedupRepository methods** are split as `<service>:dedup:<handler>:<uuid>` (any other
 * key: service "", handler = all before the last `:`).
 */
export class PostgresInboxRepository implements DedupRepository {
  readonly kind = "postgres-inbox" as const;
  /** The quoted table name, `"schema"."table"`. */
  readonly table: string;
  private readonly index: string;

  constructor(
    readonly pool: InboxSqlPool,
    options: PostgresInboxRepositoryOptions = {},
  ) {
    const o = { ...DEFAULT_POSTGRES_INBOX_OPTIONS, ...options };
    for (const [name, v] of Object.entries(o))
      if (!IDENT.test(v)) throw new RangeError(`PostgresInboxRepository: ${name} must match ${IDENT} (got "${v}")`);
    this.table = `"${o.schema}"."${o.table}"`;
    this.index = `${o.table}_expires_at`;
  }

  /** Creates the schema, the table and its `expires_at` index when missing (idempotent). */
  async ensureSchema(): Promise<void> {
    const schema = this.table.slice(1, this.table.indexOf('"', 1));
    await this.pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (service text NOT NULL, handler text NOT NULL, uuid text NOT NULL,
        position text, fingerprint text, state text NOT NULL, expires_at timestamptz NOT NULL,
        PRIMARY KEY (service, handler, uuid))`,
    );
    await this.pool.query(`CREATE INDEX IF NOT EXISTS "${this.index}" ON ${this.table} (expires_at)`);
  }

  /**
   * Claims `c` in transaction `tx`: inserts its row (state `done:<position>#<fingerprint>`) and
   * resolves null, or resolves the live row already there. A conflict on the primary key is the
   * duplicate; an expired row not yet cleaned up is taken over. **A copy in flight elsewhere** (its
   * row inserted by an open transaction) makes this wait until that transaction ends — at most the
   * transaction's `lock_timeout` — then see its row (committed) or take the key (rolled back).
   */
  async claimIn(tx: InboxSqlClient, c: InboxClaim): Promise<InboxHeld | null> {
    const state = doneValue(c.position, c.fingerprint);
    const row = [c.service, c.handler, c.uuid, c.position ?? null, c.fingerprint ?? null, state, c.ttlMs];
    for (let attempt = 0; ; attempt++) {
      const ins = await tx.query(
        `INSERT INTO ${this.table} AS i (service, handler, uuid, position, fingerprint, state, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, ${TTL})
         ON CONFLICT (service, handler, uuid) DO UPDATE SET position = excluded.position,
           fingerprint = excluded.fingerprint, state = excluded.state, expires_at = excluded.expires_at
         WHERE i.expires_at <= now()`,
        row,
      );
      if (ins.rowCount === 1) return null;
      const held = await tx.query(
        `SELECT state, position, fingerprint FROM ${this.table}
         WHERE service = $1 AND handler = $2 AND uuid = $3 AND expires_at > now()`,
        [c.service, c.handler, c.uuid],
      );
      const r = held.rows[0];
      if (r) return { state: String(r.state), position: nullable(r.position), fingerprint: nullable(r.fingerprint) };
      // The row expired or was cleaned up between the two statements: claim again.
      if (attempt >= 2) throw new Error(`PostgresInboxRepository: ${c.uuid} neither claimed nor held after 3 tries`);
    }
  }

  /**
   * Deletes expired rows in batches of `batchSize` (oldest first, by the `expires_at` index; rows a
   * running claim holds are skipped), at most `maxBatches` statements; resolves how many it deleted.
   * Run it on a timer (`setInterval(…).unref()`) from one or every replica: batches never overlap.
   */
  async deleteExpired(options: InboxCleanupOptions = {}): Promise<number> {
    const batchSize = options.batchSize ?? 1000;
    const maxBatches = options.maxBatches ?? 100;
    if (!(Number.isInteger(batchSize) && batchSize > 0)) throw new RangeError("deleteExpired: batchSize must be > 0");
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      const r = await this.pool.query(
        `DELETE FROM ${this.table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${this.table}
           WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))`,
        [batchSize],
      );
      total += r.rowCount ?? 0;
      if ((r.rowCount ?? 0) < batchSize) break;
    }
    return total;
  }

  async claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.pool.query(
        `INSERT INTO ${this.table} AS i (service, handler, uuid, state, expires_at)
         VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 millisecond')
         ON CONFLICT (service, handler, uuid) DO UPDATE SET state = excluded.state, expires_at = excluded.expires_at,
           position = NULL, fingerprint = NULL
         WHERE i.expires_at <= now()`,
        [...splitKey(key), value, ttlMs],
      );
      if (r.rowCount === 1) return null;
      const held = await this.read(key);
      if (held !== null) return held;
      // The row expired or was deleted between the two statements: claim again.
      if (attempt >= 2) throw new Error(`PostgresInboxRepository: ${key} neither claimed nor held after 3 tries`);
    }
  }

  async claimBatch(requests: readonly ClaimRequest[]): Promise<ClaimReply[]> {
    const out: ClaimReply[] = [];
    for (const q of requests) out.push(await this.claim(q.key, q.value, q.ttlMs).catch((e: Error) => e));
    return out;
  }

  async compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE ${this.table} SET state = $5, expires_at = now() + $6::bigint * interval '1 millisecond'
       WHERE service = $1 AND handler = $2 AND uuid = $3 AND state = $4 AND expires_at > now()`,
      [...splitKey(key), expected, value, ttlMs],
    );
    return r.rowCount === 1;
  }

  async compareAndDelete(key: string, expected: string): Promise<boolean> {
    const r = await this.pool.query(
      `DELETE FROM ${this.table} WHERE service = $1 AND handler = $2 AND uuid = $3 AND state = $4 AND expires_at > now()`,
      [...splitKey(key), expected],
    );
    return r.rowCount === 1;
  }

  async markDone(key: string, value: string, ttlMs: number): Promise<string | null> {
    const params = [...splitKey(key), value, ttlMs];
    const live = await this.pool.query(
      `UPDATE ${this.table} AS i SET state = $4, expires_at = now() + $5::bigint * interval '1 millisecond'
       FROM (SELECT state AS prev FROM ${this.table}
         WHERE service = $1 AND handler = $2 AND uuid = $3 AND expires_at > now() FOR UPDATE) AS o
       WHERE i.service = $1 AND i.handler = $2 AND i.uuid = $3 RETURNING o.prev`,
      params,
    );
    if (live.rowCount === 1) return nullable(live.rows[0]?.prev);
    // No live row: write one over an absent or expired row (a live one written meanwhile is overwritten: done is a fact).
    await this.pool.query(
      `INSERT INTO ${this.table} AS i (service, handler, uuid, state, expires_at)
       VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 millisecond')
       ON CONFLICT (service, handler, uuid) DO UPDATE SET state = excluded.state, expires_at = excluded.expires_at`,
      params,
    );
    return null;
  }

  async markDoneBatch(requests: readonly MarkDoneRequest[]): Promise<ClaimReply[]> {
    const out: ClaimReply[] = [];
    for (const q of requests) out.push(await this.markDone(q.key, q.value, q.ttlMs).catch((e: Error) => e));
    return out;
  }

  async compareAndSetBatch(requests: readonly CompareAndSetRequest[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const q of requests) out.push(await this.compareAndSet(q.key, q.expected, q.value, q.ttlMs));
    return out;
  }

  /** The live value of a key and its remaining TTL in ms (the key browser's read), or null. */
  async inspect(key: string): Promise<{ value: string; pttlMs: number } | null> {
    const r = await this.pool.query(
      `SELECT state, ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint AS pttl FROM ${this.table}
       WHERE service = $1 AND handler = $2 AND uuid = $3 AND expires_at > now()`,
      splitKey(key),
    );
    const row = r.rows[0];
    return row ? { value: String(row.state), pttlMs: Number(row.pttl) } : null;
  }

  private async read(key: string): Promise<string | null> {
    return (await this.inspect(key))?.value ?? null;
  }
}

/** `<service>:dedup:<handler>:<uuid>` → [service, handler, uuid]; another key → ["", before the last ":", after it]. */
export function splitKey(key: string): [string, string, string] {
  const last = key.lastIndexOf(":");
  const prefix = last < 0 ? "" : key.slice(0, last);
  const uuid = key.slice(last + 1);
  const d = prefix.indexOf(":dedup:");
  return d < 0 ? ["", prefix, uuid] : [prefix.slice(0, d), prefix.slice(d + ":dedup:".length), uuid];
}

function nullable(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}
