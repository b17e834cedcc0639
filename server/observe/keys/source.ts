/**
 * The surface the routes read dedup keys through, whatever holds them: the Redis `KeyInspector`
 * (server/observe/keys/inspector.ts), the embedded mode's `MemoryInspector`
 * (server/observe/keys/memory-inspector.ts) or, beside either, the PostgreSQL inbox's rows
 * (server/observe/keys/postgres-inbox-inspector.ts), and the result shapes they publish.
 */
import type { HandlerKeys, ScanProgress } from "@/lib/api/handlers";
import type { KeyLookupResponse, KeysResponse } from "@/lib/api/keys";

/**
 * What the routes read keys through, whatever holds them: the Redis `KeyInspector` or the
 * embedded mode's `MemoryInspector` (server/observe/keys/memory-inspector.ts).
 */
export interface KeySource {
  readonly kind: "redis" | "memory" | "postgres-inbox";
  readonly prefixes: readonly string[];
  readonly busy: boolean;
  current(): InspectorState;
  recount(): number | null;
  refresh(mode?: "auto" | "exact" | "estimate"): { started: boolean; retryAfterMs: number };
  ensureFresh(): void;
  run(mode?: "auto" | "exact" | "estimate"): Promise<Inspection>;
  /**
   * One page of `<prefix>:*` keys, when the source pages its keys itself (the in-memory stores of
   * this process). Absent on the Redis inspector: the key browser pages Redis under the shared budget.
   * Dispatch on this method, never on the class: route bundles and `instrumentation.ts` load their
   * own copies of the module, so an inspector built in one fails `instanceof` in another.
   */
  browse?(q: { prefix: string; cursor?: string; count: number }): KeysResponse | Promise<KeysResponse>;
  /** Looks `<prefix>:<uuid>` up under at most `maxPrefixes` known prefixes; present with {@link KeySource.browse}. */
  lookup?(q: { uuid: string; prefix?: string }, maxPrefixes: number): Promise<KeyLookupResponse>;
}

/** The owner of a handler's keys: its service and handler, and its key prefix `<service>:dedup:<handler>`. */
export interface HandlerOwner {
  service: string;
  handler: string;
  prefix: string;
}

/** One stored key as a key action read it: its value, idle time (null: not kept) and remaining TTL (null: none). */
export interface StoredKey {
  key: string;
  value: string;
  idleMs: number | null;
  ttlMs: number | null;
}

/**
 * A SQL source beside the key store: the PostgreSQL inbox's rows `(service, handler, uuid)`, each
 * shown as the key `<service>:dedup:<handler>:<uuid>`. It counts, pages and looks up the rows of
 * the handlers it {@link InboxKeySource.owns} and runs the key actions on them.
 */
export interface InboxKeySource extends KeySource {
  readonly kind: "postgres-inbox";
  /** The table read, `"schema"."table"`. */
  readonly table: string;
  /** The handler a prefix is, when its rows are in this table: declared `postgres-inbox`, or found by the last count. */
  owns(prefix: string): HandlerOwner | null;
  browse(q: { prefix: string; cursor?: string; count: number }): Promise<KeysResponse>;
  lookup(q: { uuid: string; prefix?: string }, maxPrefixes: number): Promise<KeyLookupResponse>;
  /** The rows of `uuid` under each of `owners` (one indexed read). */
  lookupIn(uuid: string, owners: readonly HandlerOwner[]): Promise<KeyLookupResponse["matches"]>;
  /** The live rows of a key action's selection (by UUID list, else every row, bounded). */
  readRows(
    owner: HandlerOwner,
    uuids: readonly string[] | undefined,
  ): Promise<{ read: StoredKey[]; complete: boolean }>;
  /** Deletes each row, or sets its expiry, only while its state is the one read; the keys changed. */
  actOnRows(
    owner: HandlerOwner,
    keys: ReadonlyMap<string, string>,
    op: "unlink" | "pexpire",
    ttlMs: number,
  ): Promise<{ changed: string[]; complete: boolean }>;
}

/** A finished inspection. */
export interface Inspection {
  mode: "exact" | "estimate";
  startedAt: number;
  finishedAt: number;
  /** DBSIZE summed over the masters at the start. */
  total: number;
  handlers: HandlerKeys[];
  /** Script calls and their slowest server-side duration, for tests and the bench. */
  calls: number;
  maxCallMicros: number;
  /** Estimate runs: keys sampled per master (`host:port`), in proportion to its DBSIZE. */
  drawsByMaster?: Record<string, number>;
}

/** What the inspector knows now. */
export interface InspectorState {
  result: Inspection | null;
  progress: ScanProgress;
  /** Last error (Redis down…), cleared by the next successful run. */
  error: string | null;
}

/**
 * Progress (0..1) of a recount running now, `null` when none runs — both inspectors' `recount()`.
 * Pages show the last completed count with this beside it, never the running scan's partial totals.
 */
export function recountShare(running: boolean, p: ScanProgress): number | null {
  if (!running || p.done) return null;
  return p.total > 0 ? Math.min(1, p.scanned / p.total) : 0;
}
