/**
 * What became of each DLQ record, keyed by its DLQ position (DLQ topic, partition, offset):
 * `open` (no row: it waits), `redriven` (when, by whom, to which topic/partition/offset, with which
 * UUID), `discarded` (when, by whom, why). `expired` is not stored: a position below its
 * partition's low watermark has left the log ({@link stateAt}). Kept in PostgreSQL, the audit
 * trail's database (`DATABASE_URL`, one table made on first use, survives restarts), else in this
 * process's memory (lost at restart). One store per process, kept on globalThis.
 */
import { Pool } from "pg";
import { config } from "@/server/config";

/** Where a re-drive published a record (`partition` / `offset` when the publisher said). */
export interface RedriveDestination {
  topic: string;
  partition?: number;
  offset?: string;
  uuid: string;
}

/** A record's resolution, as kept: re-driven or discarded. */
export type DlqResolution =
  | { state: "redriven"; at: string; who: string; to: RedriveDestination }
  | { state: "discarded"; at: string; who: string; why: string };

/** A DLQ position: the record's place in its DLQ topic. */
export interface DlqPosition {
  partition: number;
  offset: string;
}

/** What to write for one position (the time is the store's). */
export type DlqResolutionInput = DlqPosition &
  ({ state: "redriven"; who: string; to: RedriveDestination } | { state: "discarded"; who: string; why: string });

/** The key of a position in {@link DlqStateStore.resolved}'s map. */
export const positionKey = (p: { partition: number; offset: string | bigint }): string =>
  `${p.partition}:${p.offset.toString()}`;

/** The store of resolutions. */
export interface DlqStateStore {
  readonly kind: "postgres" | "memory";
  /**
   * The resolutions of `dlqTopic`'s positions at or above each partition's low watermark (`lows`;
   * a partition not named: every position), by {@link positionKey}.
   */
  resolved(dlqTopic: string, lows?: ReadonlyMap<number, bigint>): Promise<Map<string, DlqResolution>>;
  /** Writes resolutions (a later one of the same position replaces it). */
  resolve(dlqTopic: string, items: readonly DlqResolutionInput[]): Promise<void>;
  close(): Promise<void>;
}

const toResolution = (i: DlqResolutionInput, at: Date): DlqResolution =>
  i.state === "redriven"
    ? { state: "redriven", at: at.toISOString(), who: i.who, to: { ...i.to } }
    : { state: "discarded", at: at.toISOString(), who: i.who, why: i.why };

const aboveLow = (lows: ReadonlyMap<number, bigint> | undefined, partition: number, offset: bigint) =>
  offset >= (lows?.get(partition) ?? 0n);

/** Resolutions in process memory (no `DATABASE_URL`). */
export class MemoryDlqStateStore implements DlqStateStore {
  readonly kind = "memory" as const;
  private readonly topics = new Map<string, Map<string, DlqResolution>>();

  async resolved(dlqTopic: string, lows?: ReadonlyMap<number, bigint>): Promise<Map<string, DlqResolution>> {
    const out = new Map<string, DlqResolution>();
    for (const [k, v] of this.topics.get(dlqTopic) ?? []) {
      const [p, o] = k.split(":") as [string, string];
      if (aboveLow(lows, Number(p), BigInt(o))) out.set(k, v);
    }
    return out;
  }

  async resolve(dlqTopic: string, items: readonly DlqResolutionInput[]): Promise<void> {
    let t = this.topics.get(dlqTopic);
    if (!t) this.topics.set(dlqTopic, (t = new Map()));
    const at = new Date();
    for (const i of items) t.set(positionKey(i), toResolution(i, at));
  }

  async close(): Promise<void> {}
}

/** Default table of the PostgreSQL store (beside the audit trail's). */
export const DLQ_STATE_TABLE = "dedup_health_dlq_state";

interface Row {
  partition: number;
  dlq_offset: string;
  state: "redriven" | "discarded";
  at: Date;
  who: string;
  why: string | null;
  to_topic: string | null;
  to_partition: number | null;
  to_offset: string | null;
  to_uuid: string | null;
}

function fromRow(r: Row): DlqResolution {
  const base = { at: r.at.toISOString(), who: r.who };
  if (r.state === "discarded") return { state: "discarded", ...base, why: r.why ?? "" };
  const to: RedriveDestination = { topic: r.to_topic ?? "", uuid: r.to_uuid ?? "" };
  if (r.to_partition !== null) to.partition = r.to_partition;
  if (r.to_offset !== null) to.offset = r.to_offset;
  return { state: "redriven", ...base, to };
}

/** Resolutions in PostgreSQL: one row per resolved position, the table made on first use. */
export class PostgresDlqStateStore implements DlqStateStore {
  readonly kind = "postgres" as const;
  private readonly pool: Pool;
  private readonly table: string;
  private migrated: Promise<void> | null = null;

  constructor(connectionString: string, table = DLQ_STATE_TABLE) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table))
      throw new RangeError(`DLQ state table: expected a lower-case SQL name, got ${table}`);
    this.table = `"public"."${table}"`;
    this.pool = new Pool({ connectionString, max: 2, connectionTimeoutMillis: 5000 });
    this.pool.on("error", () => undefined);
  }

  /** Creates the table if missing (idempotent); a failure is retried at the next call. */
  migrate(): Promise<void> {
    this.migrated ??= this.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (
        dlq_topic text NOT NULL,
        partition integer NOT NULL,
        dlq_offset bigint NOT NULL,
        state text NOT NULL CHECK (state IN ('redriven', 'discarded')),
        at timestamptz NOT NULL DEFAULT now(),
        who text NOT NULL,
        why text,
        to_topic text,
        to_partition integer,
        to_offset bigint,
        to_uuid text,
        PRIMARY KEY (dlq_topic, partition, dlq_offset)
      )`,
      )
      .then(() => undefined)
      .catch((e: unknown) => {
        this.migrated = null;
        throw e;
      });
    return this.migrated;
  }

  async resolved(dlqTopic: string, lows?: ReadonlyMap<number, bigint>): Promise<Map<string, DlqResolution>> {
    await this.migrate();
    const cols =
      "partition, dlq_offset::text AS dlq_offset, state, at, who, why, to_topic, to_partition, to_offset::text AS to_offset, to_uuid";
    // With the low watermarks, only the rows still in the log are read (a range of the primary key per partition): rows below them stay, never read again.
    const r = lows
      ? await this.pool.query<Row>(
          `SELECT ${cols} FROM ${this.table} s JOIN unnest($2::int[], $3::bigint[]) AS l(p, low) ON s.partition = l.p AND s.dlq_offset >= l.low WHERE s.dlq_topic = $1`,
          [dlqTopic, [...lows.keys()], [...lows.values()].map(String)],
        )
      : await this.pool.query<Row>(`SELECT ${cols} FROM ${this.table} WHERE dlq_topic = $1`, [dlqTopic]);
    const out = new Map<string, DlqResolution>();
    for (const row of r.rows) out.set(positionKey({ partition: row.partition, offset: row.dlq_offset }), fromRow(row));
    return out;
  }

  async resolve(dlqTopic: string, items: readonly DlqResolutionInput[]): Promise<void> {
    if (items.length === 0) return;
    await this.migrate();
    const args: unknown[] = [];
    const arg = (v: unknown) => `$${args.push(v)}`;
    const values = items.map((i) => {
      const to = i.state === "redriven" ? i.to : null;
      return `(${[dlqTopic, i.partition, i.offset, i.state, i.who, i.state === "discarded" ? i.why : null, to?.topic ?? null, to?.partition ?? null, to?.offset ?? null, to?.uuid ?? null].map(arg).join(", ")})`;
    });
    await this.pool.query(
      `INSERT INTO ${this.table} (dlq_topic, partition, dlq_offset, state, who, why, to_topic, to_partition, to_offset, to_uuid) VALUES ${values.join(", ")}
       ON CONFLICT (dlq_topic, partition, dlq_offset) DO UPDATE SET state = EXCLUDED.state, at = now(), who = EXCLUDED.who, why = EXCLUDED.why,
         to_topic = EXCLUDED.to_topic, to_partition = EXCLUDED.to_partition, to_offset = EXCLUDED.to_offset, to_uuid = EXCLUDED.to_uuid`,
      args,
    );
  }

  /** Drops the table (tests). */
  async drop(): Promise<void> {
    await this.pool.query(`DROP TABLE IF EXISTS ${this.table}`);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

/** A record's state as the DLQ page shows it: `open`, its resolution, or `expired` below the low watermark. */
export type DlqRecordState = { state: "open" } | DlqResolution | { state: "expired" };

/** The state of the record at `offset` of a partition whose log starts at `low`. */
export function stateAt(resolutions: ReadonlyMap<string, DlqResolution>, p: DlqPosition, low: bigint): DlqRecordState {
  if (BigInt(p.offset) < low) return { state: "expired" };
  return resolutions.get(positionKey(p)) ?? { state: "open" };
}

type G = typeof globalThis & { __dedupHealthDlqState?: DlqStateStore };

/** The process's store: PostgreSQL with `DATABASE_URL`, else memory. */
export function dlqStateStore(): DlqStateStore {
  const g = globalThis as G;
  g.__dedupHealthDlqState ??= config().DATABASE_URL
    ? new PostgresDlqStateStore(config().DATABASE_URL!)
    : new MemoryDlqStateStore();
  return g.__dedupHealthDlqState;
}

/** Replaces the process's store (tests, the CLI), or with `null` closes and forgets it. */
export async function setDlqStateStore(store: DlqStateStore | null): Promise<void> {
  const g = globalThis as G;
  const old = g.__dedupHealthDlqState;
  if (store) g.__dedupHealthDlqState = store;
  else delete g.__dedupHealthDlqState;
  if (old && old !== store) await old.close();
}

type R = typeof globalThis & { __dedupHealthDlqResolvedAt?: number };

/** When this process last wrote a resolution (ms; 0: never): a backlog read older than it is out of date. */
export function lastResolvedAt(): number {
  return (globalThis as R).__dedupHealthDlqResolvedAt ?? 0;
}

/** Notes that resolutions were just written (the backlog's next read is due at once). */
export function noteResolved(): void {
  (globalThis as R).__dedupHealthDlqResolvedAt = Date.now();
}
