/**
 * The audit trail of every state-changing action (key forget / TTL, DLQ re-drive, workshop runs,
 * demo switches and faults, …): when, who, what, the filter, how many matched and changed, the
 * result. {@link recordAudit} is the one call other code makes; {@link audited} wraps a route's
 * work so that its outcome — success or failure — is recorded. Kept on globalThis (Next.js
 * evaluates modules more than once): PostgreSQL when `DATABASE_URL` is set, else memory.
 */
import type { AuditEntry } from "@/lib/api/audit";
import { checkAccess, listenInfo } from "@/server/access";
import { config } from "@/server/config";
import { UpstreamUnavailableError } from "@/server/http";
import { MemoryAuditStore, PostgresAuditStore, type AuditInput, type AuditStore } from "./store";

export type { AuditInput, AuditStore } from "./store";

type G = typeof globalThis & { __dedupHealthAudit?: AuditStore };

/** The process's audit store (memory until {@link initAudit} set up PostgreSQL). */
export function auditStore(): AuditStore {
  const g = globalThis as G;
  g.__dedupHealthAudit ??= config().DATABASE_URL ? new PostgresAuditStore(config().DATABASE_URL!) : new MemoryAuditStore();
  return g.__dedupHealthAudit;
}

/** Replaces the process's audit store (tests), or with `null` closes and forgets it. */
export async function setAuditStore(store: AuditStore | null): Promise<void> {
  const g = globalThis as G;
  const old = g.__dedupHealthAudit;
  if (store) g.__dedupHealthAudit = store;
  else delete g.__dedupHealthAudit;
  if (old && old !== store) await old.close();
}

/**
 * Start-up: with `DATABASE_URL`, creates (migrates) the audit table. **Rejects with a message
 * naming `DATABASE_URL` when the database cannot be reached**; start-up logs it as an error and the
 * dashboard still serves what only reads: until the database answers, `GET /api/audit` is a 503
 * "audit store unavailable" and every action that changes state is refused with that 503
 * ({@link audited}) rather than done unaudited. Dry runs still answer.
 */
export async function initAudit(): Promise<"postgres" | "memory"> {
  const store = auditStore();
  if (store instanceof PostgresAuditStore) {
    try {
      await store.migrate();
    } catch (e) {
      throw new Error(`DATABASE_URL: the audit trail's database is unreachable or refused the table (${e instanceof Error ? e.message : String(e)}); fix or unset DATABASE_URL`);
    }
  }
  return store.kind;
}

/**
 * Records one action. Never throws (an audit write failing must not turn a done action into an
 * error answer): a failure is logged with the entry.
 */
export async function recordAudit(entry: AuditInput): Promise<AuditEntry | null> {
  try {
    return await auditStore().append(entry);
  } catch (e) {
    console.error(`[audit] could not record ${JSON.stringify(entry)}: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}

/** Who made a request, as the access rule saw it: `token`, `local`, `embedded` (or `anonymous`). */
export function auditActor(req: Request): string {
  const d = checkAccess(req.headers, config(), listenInfo());
  return d.ok ? d.reason : "anonymous";
}

/** The counts of an action's answer, for the trail, and what it touched (bounded lists: `touchedList`). */
export interface AuditCounts {
  matched: number | null;
  changed: number | null;
  touched?: AuditEntry["touched"];
}

/** The `service` / `handler` an action concerns (its chart marker shows on their pages); `{}`: the whole app. */
export type AuditScope = Readonly<Record<string, string>>;

/** The counts of an action that counts nothing (a switch, a run started). */
export const NO_COUNTS = (): AuditCounts => ({ matched: null, changed: null });

/** The 503 of an audit store that cannot be read or written now (its reason redacted like every answer). */
export function auditUnavailable(e: unknown, what: string): UpstreamUnavailableError {
  return new UpstreamUnavailableError(`audit store unavailable: ${e instanceof Error ? e.message : String(e)}; ${what} (check DATABASE_URL)`);
}

/**
 * Runs `fn` (a route's work) and records it: `ok` with the counts `counts` reads from its answer,
 * or `error: <message>` when it throws (rethrown). `filter` is what the caller asked for; `scope`
 * the `service` / `handler` it concerns (its chart marker shows on their pages; none: every page),
 * or a function of the answer when only the answer knows (a silence expired by id).
 * **An action that changes state (not a dry run) is refused with a 503 when the audit store cannot
 * keep its entry now**: nothing is done that the trail would not show. A dry run changes nothing
 * and still answers (its entry is logged when it cannot be kept).
 */
export async function audited<T>(
  req: Request,
  action: string,
  filter: object,
  dryRun: boolean,
  fn: () => Promise<T>,
  counts: (r: T) => AuditCounts = NO_COUNTS,
  scope: AuditScope | ((r: T) => AuditScope) = {},
): Promise<T> {
  const base = { who: auditActor(req), action, filter: { ...filter } as Record<string, unknown>, dryRun, scope: typeof scope === "function" ? {} : scope };
  if (!dryRun) {
    try {
      await auditStore().ready();
    } catch (e) {
      console.error(`[audit] refused ${action} (not performed): the audit store cannot keep its entry: ${e instanceof Error ? e.message : String(e)}`);
      throw auditUnavailable(e, `${action} was not performed: every change is audited`);
    }
  }
  try {
    const r = await fn();
    await recordAudit({ ...base, ...counts(r), result: "ok", ...(typeof scope === "function" ? { scope: scope(r) } : {}) });
    return r;
  } catch (e) {
    await recordAudit({ ...base, matched: null, changed: null, result: `error: ${e instanceof Error ? e.message : String(e)}` });
    throw e;
  }
}
