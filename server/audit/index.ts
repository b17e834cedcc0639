/**
 * The audit trail of every state-changing action (key forget / TTL, DLQ re-drive, workshop runs,
 * demo switches and faults, …): when, who, what, the filter, how many matched and changed, the
 * result. {@link recordAudit} is the one call other code makes; {@link audited} wraps a route's
 * work so that its outcome — success or failure — is recorded. Kept on globalThis (Next.js
 * evaluates modules more than once): PostgreSQL when `DATABASE_URL` is set, else memory.
 */
import type { AuditEntry } from "@/lib/api/audit";
import { may, principalOf, refusalText, rolesText, topRole, type Principal } from "@/server/auth/principal";
import { config } from "@/server/config";
import { ForbiddenError, UpstreamUnavailableError } from "@/server/http";
import { MemoryAuditStore, PostgresAuditStore, type AuditCompletion, type AuditInput, type AuditStore } from "./store";

export type { AuditCompletion, AuditInput, AuditStore } from "./store";

type G = typeof globalThis & { __dedupHealthAudit?: AuditStore };

/** The process's audit store (memory until {@link initAudit} set up PostgreSQL). */
export function auditStore(): AuditStore {
  const g = globalThis as G;
  g.__dedupHealthAudit ??= config().DATABASE_URL
    ? new PostgresAuditStore(config().DATABASE_URL!)
    : new MemoryAuditStore();
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
      throw new Error(
        `DATABASE_URL: the audit trail's database is unreachable or refused the table (${e instanceof Error ? e.message : String(e)}); fix or unset DATABASE_URL`,
      );
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

/** What the trail keeps of a principal beside its name. */
export function auditPrincipal(p: Principal): AuditEntry["principal"] {
  const role = topRole(p);
  return {
    source: p.source,
    ...(p.email ? { email: p.email } : {}),
    ...(role ? { role } : {}),
    roles: rolesText(p),
    ...(p.address ? { address: p.address } : {}),
  };
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
  return new UpstreamUnavailableError(
    `audit store unavailable: ${e instanceof Error ? e.message : String(e)}; ${what} (check DATABASE_URL)`,
  );
}

/**
 * The services an action needs `write` on: `services` when given, else the static scope's
 * `service`, else none named (`undefined`: the whole app, only a `*` grant may).
 */
function targetsOf(
  scope: AuditScope | ((r: never) => AuditScope),
  services: readonly string[] | undefined,
): readonly (string | undefined)[] {
  if (services && services.length > 0) return services;
  if (typeof scope !== "function" && scope.service !== undefined) return [scope.service];
  return [undefined];
}

/** Options of {@link audited} beyond the positional ones. */
export interface AuditedOptions {
  /** The services the action needs `write` on (default: the scope's `service`; none: the whole app). */
  services?: readonly string[];
}

/**
 * Runs `fn` (a route's work, given the request's principal) and records it. First the principal
 * must have `write` on every service the action concerns (`options.services`, else the scope's
 * `service`, else the whole app): if not, a `refused: <why>` entry and a 403 — nothing is done.
 * **A change (not a dry run) is written `started` before it is done and completed after** (`ok`
 * with the counts `counts` reads from the answer, or `error: <message>` when `fn` throws,
 * rethrown): when the store cannot take the `started` entry the action is refused with a 503, so
 * nothing happens that the trail does not show. A dry run changes nothing: it runs, then its entry
 * is recorded (logged when it cannot be). `filter` is what the caller asked for; `scope` the
 * `service` / `handler` it concerns (its chart marker shows on their pages), or a function of the
 * answer when only the answer knows (a re-drive by UUIDs, a silence expired by id).
 */
export async function audited<T>(
  req: Request,
  action: string,
  filter: object,
  dryRun: boolean,
  fn: (p: Principal) => Promise<T>,
  counts: (r: T) => AuditCounts = NO_COUNTS,
  scope: AuditScope | ((r: T) => AuditScope) = {},
  options: AuditedOptions = {},
): Promise<T> {
  const p = await principalOf(req);
  const base: AuditInput = {
    who: p.name,
    principal: auditPrincipal(p),
    action,
    filter: { ...filter } as Record<string, unknown>,
    dryRun,
    scope: typeof scope === "function" ? {} : scope,
    matched: null,
    changed: null,
    result: "started",
  };
  const targets = targetsOf(scope, options.services);
  const refused = targets.findIndex((s) => !may(p, "write", s));
  if (refused >= 0) {
    const why = refusalText(p, action, targets[refused]);
    await recordAudit({ ...base, result: `refused: ${why}` });
    throw new ForbiddenError(why);
  }
  if (dryRun) return dryRunAudited(base, () => fn(p), counts, scope);
  const store = auditStore();
  let id: string;
  try {
    id = (await store.append(base)).id;
  } catch (e) {
    console.error(
      `[audit] refused ${action} (not performed): the audit store cannot keep its entry: ${e instanceof Error ? e.message : String(e)}`,
    );
    throw auditUnavailable(e, `${action} was not performed: every change is audited`);
  }
  const done = (c: AuditCompletion) =>
    store
      .complete(id, c)
      .catch((e: unknown) =>
        console.error(
          `[audit] ${action} was done but its entry ${id} stays "started": ${e instanceof Error ? e.message : String(e)}`,
        ),
      );
  try {
    const r = await fn(p);
    await done({ ...counts(r), result: "ok", ...(typeof scope === "function" ? { scope: scope(r) } : {}) });
    return r;
  } catch (e) {
    await done({ matched: null, changed: null, result: `error: ${e instanceof Error ? e.message : String(e)}` });
    throw e;
  }
}

/** A dry run: done, then recorded (an entry that cannot be kept is logged, the answer stands). */
async function dryRunAudited<T>(
  base: AuditInput,
  fn: () => Promise<T>,
  counts: (r: T) => AuditCounts,
  scope: AuditScope | ((r: T) => AuditScope),
): Promise<T> {
  try {
    const r = await fn();
    await recordAudit({
      ...base,
      ...counts(r),
      result: "ok",
      ...(typeof scope === "function" ? { scope: scope(r) } : {}),
    });
    return r;
  } catch (e) {
    await recordAudit({
      ...base,
      matched: null,
      changed: null,
      result: `error: ${e instanceof Error ? e.message : String(e)}`,
    });
    throw e;
  }
}
