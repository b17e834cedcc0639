/**
 * The demo handlers' side effect ("push sent") and its two records:
 * 1. the handler's own idempotency table (spec §5): `INSERT … ON CONFLICT (event_id) DO NOTHING`
 *    in the same transaction as the send; the push is sent only when the row is new, and a failed
 *    send rolls the row back (better not to send than to send twice);
 * 2. the push provider's ledger — the ground truth of what reached the outside world: every push,
 *    counted per event id, outside any handler transaction (a push cannot be taken back). A push
 *    for an event id already pushed is a duplicate side effect that leaked through.
 *
 * PostgreSQL (`DATABASE_URL`) in real mode; an in-process store with the same behaviour otherwise.
 */
import { Counter, type Registry } from "prom-client";
import { Pool } from "pg";

/** Metric names of the demo's side effects, written once. */
export const SIDE_EFFECT_METRICS = {
  sent: "demo_side_effects_total",
  duplicate: "demo_duplicate_side_effects_total",
} as const;

/** `demo_side_effects_total{handler}` and `demo_duplicate_side_effects_total{handler}` on `registry` (get-or-create). */
export function sideEffectCounters(registry: Registry): { sent: Counter<"handler">; duplicate: Counter<"handler"> } {
  const get = (name: string, help: string) =>
    (registry.getSingleMetric(name) as Counter<"handler"> | undefined) ?? new Counter({ name, help, labelNames: ["handler"], registers: [registry] });
  return {
    sent: get(SIDE_EFFECT_METRICS.sent, "Pushes sent by the demo handlers (every send)."),
    duplicate: get(SIDE_EFFECT_METRICS.duplicate, "Pushes for an event id that had already been pushed: duplicates that leaked through dedup and handler idempotency."),
  };
}

/** What one push did. */
export interface PushResult {
  /** True when this event id had been pushed before: a duplicate side effect. */
  duplicate: boolean;
}

/** Observer of pushes (a workshop run counts its own). */
export type PushObserver = (handler: string, eventId: string, r: PushResult) => void;

/** The side-effect store seam. */
export interface SideEffectStore {
  readonly kind: "postgres" | "memory";
  /**
   * Idempotent send (spec §5): in one transaction, record `eventId` for `handler` and, only when
   * the row is new, run `push`. If `push` throws, the record is rolled back and the error thrown.
   * Resolves `"sent"` or `"skipped"` (already sent: nothing new happens).
   */
  sendOnce(handler: string, eventId: string, push: () => Promise<void>): Promise<"sent" | "skipped">;
  /** The push itself: writes the provider ledger and reports whether it duplicated an earlier push. */
  push(handler: string, eventId: string): Promise<PushResult>;
  /** Releases connections; `drop` also deletes the store's tables (a workshop run's own schema). */
  close(drop?: boolean): Promise<void>;
}

const ident = (s: string) => s.toLowerCase().replace(/[^a-z0-9_]/g, "_").slice(0, 50);

/** In-process store (embedded mode). */
export class MemorySideEffectStore implements SideEffectStore {
  readonly kind = "memory" as const;
  private readonly sent = new Map<string, Set<string>>();
  private readonly ledger = new Map<string, number>();
  constructor(private readonly observe?: PushObserver) {}

  async sendOnce(handler: string, eventId: string, push: () => Promise<void>): Promise<"sent" | "skipped"> {
    let set = this.sent.get(handler);
    if (!set) this.sent.set(handler, (set = new Set()));
    if (set.has(eventId)) return "skipped";
    set.add(eventId); // the "row", visible to concurrent callers at once like a row lock
    try {
      await push();
    } catch (e) {
      set.delete(eventId); // rollback
      throw e;
    }
    return "sent";
  }

  async push(handler: string, eventId: string): Promise<PushResult> {
    const k = `${handler}\u0000${eventId}`;
    const n = (this.ledger.get(k) ?? 0) + 1;
    this.ledger.set(k, n);
    const r = { duplicate: n > 1 };
    this.observe?.(handler, eventId, r);
    return r;
  }

  async close(): Promise<void> {
    this.sent.clear();
    this.ledger.clear();
  }
}

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

/** PostgreSQL store: `<schema>.<prefix>_<handler>_sent (event_id PK)` per handler and `<schema>.<prefix>_push_ledger`. */
export class PostgresSideEffectStore implements SideEffectStore {
  readonly kind = "postgres" as const;
  private readonly pool: Pool;
  /** The ledger's own pool: a push runs while its handler's transaction holds a connection of `pool`. */
  private readonly ledgerPool: Pool;
  private readonly schema: string;
  private readonly prefix: string;
  private readonly ready = new Map<string, Promise<void>>();

  constructor(private readonly o: PostgresSideEffectStoreOptions) {
    if (!o.connectionString) throw new RangeError("PostgresSideEffectStore: connectionString is required (DATABASE_URL)");
    const poolSize = o.poolSize ?? 8;
    if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 50) throw new RangeError("PostgresSideEffectStore: poolSize must be an integer in [1, 50]");
    this.schema = ident(o.schema ?? "public");
    this.prefix = ident(o.tablePrefix ?? "demo");
    this.pool = new Pool({ connectionString: o.connectionString, max: poolSize, connectionTimeoutMillis: 5000 });
    this.ledgerPool = new Pool({ connectionString: o.connectionString, max: Math.max(2, Math.ceil(poolSize / 2)), connectionTimeoutMillis: 5000 });
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

  private ensure(handler: string): Promise<void> {
    let p = this.ready.get(handler);
    if (!p) {
      p = (async () => {
        await this.pool.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`).catch(() => undefined);
        await this.pool.query(`CREATE TABLE IF NOT EXISTS ${this.sentTable(handler)} (event_id text PRIMARY KEY, sent_at timestamptz NOT NULL DEFAULT now())`);
        await this.pool.query(
          `CREATE TABLE IF NOT EXISTS ${this.ledgerTable} (handler text NOT NULL, event_id text NOT NULL, pushes int NOT NULL, PRIMARY KEY (handler, event_id))`,
        );
      })();
      p.catch(() => this.ready.delete(handler));
      this.ready.set(handler, p);
    }
    return p;
  }

  async sendOnce(handler: string, eventId: string, push: () => Promise<void>): Promise<"sent" | "skipped"> {
    await this.ensure(handler);
    const c = await this.pool.connect();
    try {
      await c.query("BEGIN");
      const r = await c.query(`INSERT INTO ${this.sentTable(handler)} (event_id) VALUES ($1) ON CONFLICT (event_id) DO NOTHING`, [eventId]);
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

  async push(handler: string, eventId: string): Promise<PushResult> {
    await this.ensure(handler);
    const r = await this.ledgerPool.query<{ pushes: number }>(
      `INSERT INTO ${this.ledgerTable} (handler, event_id, pushes) VALUES ($1, $2, 1)
       ON CONFLICT (handler, event_id) DO UPDATE SET pushes = ${this.ledgerTable}.pushes + 1 RETURNING pushes`,
      [handler, eventId],
    );
    const res = { duplicate: (r.rows[0]?.pushes ?? 1) > 1 };
    this.o.observe?.(handler, eventId, res);
    return res;
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
