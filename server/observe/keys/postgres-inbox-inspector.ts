/**
 * The PostgreSQL inbox's rows as a {@link KeySource}, beside Redis (or the in-memory store): the
 * key counts per handler (exact: one `COUNT` per `(service, handler)` over its primary-key prefix,
 * expired rows left out; states and TTLs from every row, or a uniform sample above
 * `STATS_SAMPLE_ROWS`), one page of a handler's rows by keyset paging on the primary key, a
 * uuid's row, and the key actions' reads and changes. Its statements are ./postgres-inbox-sql.ts.
 * A failed read is an error said with its reason — never a count of 0.
 */
import { ALL_DEDUP_KEYS_GLOB, dedupKeyPrefix } from "@/names/keys";
import type { InboxSqlClient } from "@/server/dedup";
import type { KeyLookupResponse, KeysResponse } from "@/lib/api/keys";
import { declaredHandlers, declaredPrefix } from "../core/handler-registry";
import { countUpstream } from "../core/upstream-counter";
import { BackgroundCount } from "./background-count";
import { PrefixGlobs } from "./glob";
import type { HandlerOwner, InboxKeySource, Inspection, StoredKey } from "./source";
import {
  actionRowsSql,
  actSql,
  decodeInboxCursor,
  exactCountSql,
  entryOfRow,
  handlerKeysOfCount,
  handlersSql,
  lookupSql,
  MAX_INBOX_PAGE,
  pageOf,
  pageSql,
  statsSamplePercent,
  statsSql,
} from "./postgres-inbox-sql";

/** Options of the {@link PostgresInboxInspector}. */
export interface PostgresInboxInspectorOptions {
  /** Globs the handlers' keys must match (`DEDUP_PREFIXES`). @default ["*:dedup:*"] */
  prefixes: readonly string[];
  /** A result older than this is counted again by `ensureFresh()`. @default 30000 */
  staleAfterMs: number;
  /** Minimum time between two counts started by `refresh()`. @default 5000 */
  refreshMinIntervalMs: number;
  /** Handlers counted at most (one statement each). @default 500 */
  maxHandlers: number;
  /** Rows one key action reads at most (call again for the rest: `complete: false`). @default 100000 */
  maxActionRows: number;
}

/** Rows changed per statement of a key action. */
const ACT_CHUNK = 1000;

/** The declared handlers whose keys are rows of the inbox (`dedup_handler_info{repository="postgres-inbox"}`). */
export function declaredInboxOwners(): HandlerOwner[] {
  return declaredHandlers()
    .filter((d) => d.setup.repository === "postgres-inbox")
    .map((d) => ({ service: d.service, handler: d.setup.handler, prefix: declaredPrefix(d) }));
}

/** Counts, pages, looks up and acts on the inbox table's rows; see the file comment. */
export class PostgresInboxInspector extends BackgroundCount implements InboxKeySource {
  readonly kind = "postgres-inbox" as const;
  private readonly opts: PostgresInboxInspectorOptions;
  private readonly globs: PrefixGlobs;

  /** `sql`: the table's pool; `table`: its quoted name (`PostgresInboxRepository.table`). */
  constructor(
    private readonly sql: InboxSqlClient,
    readonly table: string,
    opts: Partial<PostgresInboxInspectorOptions> = {},
  ) {
    const o = {
      prefixes: [ALL_DEDUP_KEYS_GLOB],
      staleAfterMs: 30_000,
      refreshMinIntervalMs: 5000,
      maxHandlers: 500,
      maxActionRows: 100_000,
      ...opts,
    };
    super({ staleAfterMs: o.staleAfterMs, refreshMinIntervalMs: o.refreshMinIntervalMs, busyRetryAfterMs: 500 });
    this.opts = o;
    this.globs = new PrefixGlobs(o.prefixes);
  }

  get prefixes(): readonly string[] {
    return this.globs.globs;
  }

  private query(text: string, params: readonly unknown[]) {
    return countUpstream("postgres", () => this.sql.query(text, params));
  }

  /** The handlers of the table (found by a loose index scan) and the declared ones, inside the globs. */
  private async owners(): Promise<HandlerOwner[]> {
    const found = await this.query(handlersSql(this.table), [this.opts.maxHandlers]);
    const all = new Map<string, HandlerOwner>();
    for (const o of declaredInboxOwners()) all.set(`${o.service}\u0000${o.handler}`, o);
    for (const r of found.rows) {
      const service = String(r.service);
      const handler = String(r.handler);
      const k = `${service}\u0000${handler}`;
      if (!all.has(k)) all.set(k, { service, handler, prefix: dedupKeyPrefix(service, handler) });
    }
    return [...all.values()].filter((o) => this.globs.matches(`${o.prefix}:x`)).slice(0, this.opts.maxHandlers);
  }

  /** Counts every handler's live rows, one statement each; exact whatever the mode. */
  protected async count(): Promise<Inspection> {
    const startedAt = Date.now();
    const at = new Date(startedAt).toISOString();
    const owners = await this.owners();
    const declared = new Set(declaredInboxOwners().map((o) => o.prefix));
    const rows: Array<[HandlerOwner, number, Record<string, unknown>]> = [];
    for (const [i, o] of owners.entries()) {
      const n = Number((await this.query(exactCountSql(this.table), [o.service, o.handler])).rows[0]?.n ?? 0);
      // States and TTLs of a big handler from a uniform sample: the exact count stays exact.
      const pct = statsSamplePercent(n);
      const params = pct === null ? [o.service, o.handler] : [o.service, o.handler, pct];
      const stats = n > 0 ? await this.query(statsSql(this.table, pct !== null), params) : null;
      rows.push([o, n, stats?.rows[0] ?? { n: 0 }]);
      const progress = { scanned: i + 1, total: owners.length, done: false, mode: "exact" as const };
      this.state = { ...this.state, progress: { ...progress, startedAt: at, finishedAt: null } };
    }
    const finishedAt = Date.now();
    const scan = {
      scanned: owners.length,
      total: owners.length,
      done: true,
      mode: "exact" as const,
      startedAt: at,
      finishedAt: new Date(finishedAt).toISOString(),
    };
    this.state = { ...this.state, progress: scan };
    // A handler whose rows all expired is no handler of the table any more, unless it is declared.
    const handlers = rows
      .map(([o, n, r]) => handlerKeysOfCount(o, n, r, scan))
      .filter((h) => h.keyCount > 0 || declared.has(h.prefix))
      .sort((x, y) => x.prefix.localeCompare(y.prefix));
    return {
      mode: "exact",
      startedAt,
      finishedAt,
      total: handlers.reduce((a, h) => a + h.keyCount, 0),
      handlers,
      calls: 1 + rows.reduce((a, [, n]) => a + (n > 0 ? 2 : 1), 0),
      maxCallMicros: 0,
    };
  }

  owns(prefix: string): HandlerOwner | null {
    const d = declaredInboxOwners().find((o) => o.prefix === prefix);
    if (d) return d;
    const h = this.state.result?.handlers.find((x) => x.prefix === prefix);
    return h ? { service: h.service, handler: h.handler, prefix } : null;
  }

  async browse(q: { prefix: string; cursor?: string; count: number }): Promise<KeysResponse> {
    const owner = this.owns(q.prefix);
    if (!owner) throw new Error(`${q.prefix} is no handler of the inbox table ${this.table}`);
    const after = decodeInboxCursor(q.cursor);
    const want = Math.min(MAX_INBOX_PAGE, Math.max(1, q.count));
    const params: unknown[] = [owner.service, owner.handler, want + 1];
    if (after !== null) params.push(after);
    const r = await this.query(pageSql(this.table, after !== null), params);
    const page = pageOf(
      r.rows.map((row) => ({ ...row, uuid: String(row.uuid) })),
      want,
    );
    const keys = page.rows.map((row) => entryOfRow(owner.prefix, row)).filter((k) => this.globs.matches(k.key));
    return {
      generatedAt: new Date().toISOString(),
      prefix: q.prefix,
      keys,
      cursor: page.cursor,
      visited: page.rows.length,
      store: "postgres-inbox",
    };
  }

  /** Looks the uuid up under the handlers the inspector owns; the route merges these with the key store's. */
  async lookup(q: { uuid: string; prefix?: string }, maxPrefixes: number): Promise<KeyLookupResponse> {
    const owners = new Map<string, HandlerOwner>();
    const first = q.prefix ? this.owns(q.prefix) : null;
    for (const o of [...(first ? [first] : []), ...declaredInboxOwners()]) owners.set(o.prefix, o);
    for (const h of this.state.result?.handlers ?? []) owners.set(h.prefix, h);
    const checked = [...owners.values()]
      .filter((o) => this.globs.matches(`${o.prefix}:${q.uuid}`))
      .slice(0, maxPrefixes);
    const matches = await this.lookupIn(q.uuid, checked);
    return { generatedAt: new Date().toISOString(), uuid: q.uuid, checkedPrefixes: checked.length, matches };
  }

  async lookupIn(uuid: string, owners: readonly HandlerOwner[]): Promise<KeyLookupResponse["matches"]> {
    if (!owners.length) return [];
    const r = await this.query(lookupSql(this.table), [
      owners.map((o) => o.service),
      owners.map((o) => o.handler),
      uuid,
    ]);
    return r.rows.flatMap((row) => {
      const o = owners.find((x) => x.service === String(row.service) && x.handler === String(row.handler));
      return o ? [{ ...entryOfRow(o.prefix, row), service: o.service, handler: o.handler, prefix: o.prefix }] : [];
    });
  }

  async readRows(
    owner: HandlerOwner,
    uuids: readonly string[] | undefined,
  ): Promise<{ read: StoredKey[]; complete: boolean }> {
    const max = this.opts.maxActionRows;
    const r = await this.query(actionRowsSql(this.table, uuids !== undefined), [
      owner.service,
      owner.handler,
      uuids ? [...uuids] : max + 1,
    ]);
    const read = r.rows
      .slice(0, max)
      .map((row) => ({
        key: `${owner.prefix}:${String(row.uuid)}`,
        value: String(row.state),
        idleMs: null,
        ttlMs: Math.max(0, Number(row.ttl_ms)),
      }))
      .filter((k) => this.globs.matches(k.key));
    return { read, complete: r.rows.length <= max };
  }

  async actOnRows(
    owner: HandlerOwner,
    keys: ReadonlyMap<string, string>,
    op: "unlink" | "pexpire",
    ttlMs: number,
  ): Promise<{ changed: string[]; complete: boolean }> {
    const items = [...keys].filter(([k]) => k.startsWith(`${owner.prefix}:`));
    const changed: string[] = [];
    for (let i = 0; i < items.length; i += ACT_CHUNK) {
      const chunk = items.slice(i, i + ACT_CHUNK);
      const params: unknown[] = [
        owner.service,
        owner.handler,
        chunk.map(([k]) => k.slice(owner.prefix.length + 1)),
        chunk.map(([, v]) => v),
      ];
      if (op === "pexpire") params.push(ttlMs);
      const r = await this.query(actSql(this.table, op), params);
      for (const row of r.rows) changed.push(`${owner.prefix}:${String(row.uuid)}`);
    }
    return { changed, complete: true };
  }
}
