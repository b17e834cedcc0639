/**
 * The key actions: `POST /api/keys/forget` (delete a handler's keys: by UUID list, or the keys of
 * a chosen state, optionally idle for a while) and `POST /api/keys/ttl` (set their TTL). **Bound to
 * their preview**: a dry run reads the keys, lists the first {@link LISTED_KEYS_MAX} and keeps all
 * it matched under a `previewId` (server/observe/keys/previews.ts); the real action takes that id
 * and acts on exactly those keys, each only while it still holds the value the dry run read
 * (`skipped` counts the others): it never selects again. A real action without a `previewId` is
 * refused for a whole prefix; by UUID list it reads and acts in one call, with the same per-key
 * check. Leases of a live owner are never selected unless `leases: "all"`. One call touches at most
 * {@link MAX_ACTION_KEYS} keys, only inside `DEDUP_PREFIXES`, under the key actions' own Redis
 * budget; cluster-safe (SCAN walks every master, each key's script goes to its slot's master). A
 * handler whose keys are the PostgreSQL inbox's rows is acted on in its table (../keys/action-store.ts).
 */
import {
  LISTED_KEYS_MAX,
  type ForgetResponse,
  type ListedKey,
  type Selection,
  type TtlResponse,
} from "@/lib/api/key-actions";
import { claimOwnerOf, dedupKeyPrefix, TTL_POLICY } from "@/names/keys";
import type { ObserveContext } from "../core/ports";
import { BadRequestError, ForbiddenError, UpstreamUnavailableError, errorText } from "../core/errors";
import { PrefixGlobs } from "../keys/glob";
import { declaredHandlers, declaredPrefix } from "../core/handler-registry";
import { classifyValue } from "../keys/samples";
import { chooseKeys } from "../keys/action-keys";
import { actionStoreOf, type ActionStore } from "../keys/action-store";
import { liveReplicas } from "../keys/lease-owners";
import { dropPreview, findPreview, keepPreview } from "../keys/previews";
import { MAX_ACTION_KEYS } from "../keys/action-scan";

export { ACTION_KEYS_PER_CALL } from "../keys/action-keys";
/** How long one call may wait for the shared budget in total before it answers `complete: false`. */
export const ACTION_BUDGET_WAIT_MS = 10_000;

/** Which keys, and what to do to them. */
export interface KeyAction {
  service: string;
  handler: string;
  uuids?: string[];
  state?: "processing" | "done" | "any";
  olderThanMs?: number;
  leases?: "dead" | "all";
  previewId?: string;
  dryRun: boolean;
  op: "unlink" | "pexpire";
  ttlMs?: number;
}

/** What an action did: the keys matched, listed, changed and skipped, and what it touched (for the audit trail). */
export interface ActionCount {
  prefix: string;
  matched: number;
  changed: number;
  complete: boolean;
  selection: Selection;
  previewId: string | null;
  previewAt: string;
  keys: ListedKey[];
  liveLeasesLeft: number;
  skipped: number;
  note?: string;
  /** Every key changed (the audit keeps the first 100 and the count). */
  touched: string[];
}

/** The key prefix of a handler: the declared one, else `<service>:dedup:<handler>`. */
export function handlerPrefix(service: string, handler: string): string {
  const d = declaredHandlers().find((h) => h.service === service && h.setup.handler === handler);
  return d ? declaredPrefix(d) : dedupKeyPrefix(service, handler);
}

/** The TTL policy of a handler: its declared window, else the default class's (spec §3). */
export function ttlPolicy(
  service: string,
  handler: string,
): { policyMs: number; policySource: "declared" | "default" } {
  const d = declaredHandlers().find((h) => h.service === service && h.setup.handler === handler);
  return d
    ? { policyMs: d.setup.ttlMs, policySource: "declared" }
    : { policyMs: TTL_POLICY.defaultMs, policySource: "default" };
}

const selectionOf = (a: KeyAction): Selection => ({
  state: a.state ?? null,
  olderThanMs: a.olderThanMs ?? null,
  leases: a.leases ?? "dead",
  uuids: a.uuids?.length ?? null,
});
const actionKind = (a: KeyAction) => (a.op === "unlink" ? "forget" : "ttl");

/** What the audit trail keeps as an action's filter: the body, and for a real action the selection and time of the preview it acts on. */
export function auditFilterOf<B extends { previewId?: string; dryRun: boolean }>(b: B): Record<string, unknown> {
  const p = !b.dryRun && b.previewId ? findPreview(b.previewId) : null;
  return p
    ? {
        ...b,
        state: p.selection.state,
        olderThanMs: p.selection.olderThanMs,
        leases: p.selection.leases,
        previewAt: p.at.toISOString(),
      }
    : { ...b };
}

/** Refuses a selection that could widen silently: a whole prefix without an explicit state, a real action on a whole prefix without its dry run. */
function checkSelection(a: KeyAction): void {
  if (a.uuids || (a.previewId && !a.dryRun)) return;
  if (!a.state)
    throw new BadRequestError(
      "state: choose processing, done or any; a selection of every key of a handler must say so (state: any)",
    );
  if (!a.dryRun)
    throw new BadRequestError(
      "previewId: a real action on a handler's keys acts on what a dry run listed; run it with dryRun: true and send the previewId it answers",
    );
}

/** A key of a preview, listed without a fresh read. */
const listedOf = (key: string, value: string): ListedKey => ({
  key,
  state: classifyValue(value),
  idleMs: null,
  ttlMs: null,
  owner: classifyValue(value) === "processing" ? claimOwnerOf(value) : null,
  ownerAlive: null,
});

/** The real action of a dry run's preview: each of its keys still holding the value read is changed, the others skipped. */
async function actOnPreview(store: ActionStore, a: KeyAction, prefix: string, deadline: number): Promise<ActionCount> {
  const p = findPreview(a.previewId!);
  if (!p)
    throw new BadRequestError(
      "previewId: that dry run's preview is gone (kept 5 minutes, or the dashboard restarted); run the dry run again",
    );
  if (p.prefix !== prefix || p.action !== actionKind(a))
    throw new BadRequestError(
      `previewId: that preview is of a ${p.action} on ${p.prefix}, not a ${actionKind(a)} on ${prefix}`,
    );
  const mine = selectionOf(a);
  if (
    (a.state !== undefined && mine.state !== p.selection.state) ||
    (a.olderThanMs !== undefined && mine.olderThanMs !== p.selection.olderThanMs)
  ) {
    throw new BadRequestError(
      "previewId: the selection sent differs from the one its dry run listed; run the dry run again",
    );
  }
  const r = await store.act(p.keys, a.op, a.ttlMs ?? 0, deadline);
  dropPreview(a.previewId!);
  const skipped = r.complete ? p.keys.size - r.changed.length : 0;
  return {
    prefix,
    matched: p.keys.size,
    changed: r.changed.length,
    complete: r.complete,
    selection: p.selection,
    previewId: a.previewId!,
    previewAt: p.at.toISOString(),
    keys: r.changed.slice(0, LISTED_KEYS_MAX).map((k) => listedOf(k, p.keys.get(k)!)),
    liveLeasesLeft: 0,
    skipped,
    touched: r.changed,
    ...(r.complete || !store.budgeted
      ? {}
      : { note: "the Redis budget ran out before every key was tried: run the dry run again for the rest" }),
  };
}

/** A dry run (keeps its preview) or a real action by UUID list (reads and acts at once, with the same per-key check). */
async function selectAndMaybeAct(
  ctx: ObserveContext,
  store: ActionStore,
  a: KeyAction,
  prefix: string,
  globs: PrefixGlobs,
  deadline: number,
): Promise<ActionCount> {
  const sel = selectionOf(a);
  const got = await store.read(a, prefix, globs, deadline);
  const leases = got.read.some((r) => classifyValue(r.value) === "processing");
  const { chosen, liveLeasesLeft } = chooseKeys(got.read, sel, leases ? await liveReplicas(ctx, a.service) : null);
  const complete = got.complete;
  const keys = new Map(chosen.map((c) => [c.key, c.value]));
  const at = new Date();
  const listed = chosen.slice(0, LISTED_KEYS_MAX).map(({ value: _v, ...k }) => k);
  const base = {
    prefix,
    matched: chosen.length,
    selection: sel,
    previewAt: at.toISOString(),
    keys: listed,
    liveLeasesLeft,
  };
  if (a.dryRun) {
    const kept = keepPreview({ prefix, action: actionKind(a), selection: sel, at, keys });
    return {
      ...base,
      changed: 0,
      complete,
      previewId: kept.id,
      skipped: 0,
      touched: [],
      ...(kept.id === null ? { note: kept.note } : {}),
    };
  }
  const r = await store.act(keys, a.op, a.ttlMs ?? 0, deadline);
  return {
    ...base,
    changed: r.changed.length,
    complete: complete && r.complete,
    previewId: null,
    skipped: r.complete ? keys.size - r.changed.length : 0,
    touched: r.changed,
  };
}

/** Runs a key action on Redis, the in-memory stores (embedded mode) or the inbox table's rows; never outside `DEDUP_PREFIXES`. */
export async function runKeyAction(ctx: ObserveContext, a: KeyAction): Promise<ActionCount> {
  const prefix = handlerPrefix(a.service, a.handler);
  const globs = new PrefixGlobs(ctx.prefixes);
  if (!globs.matches(`${prefix}:x`))
    throw new ForbiddenError(`keys of ${prefix} are outside DEDUP_PREFIXES (${ctx.prefixes.join(", ")})`);
  checkSelection(a);
  const store = actionStoreOf(ctx, prefix);
  const deadline = performance.now() + ACTION_BUDGET_WAIT_MS;
  try {
    await store.ready();
    if (a.previewId && !a.dryRun) return await actOnPreview(store, a, prefix, deadline);
    return await selectAndMaybeAct(ctx, store, a, prefix, globs, deadline);
  } catch (e) {
    if (e instanceof Error && "status" in e) throw e;
    throw new UpstreamUnavailableError(`${store.kind}: ${errorText(e)}`);
  }
}

/** The answer's fields of an action's count (all but what it touched). */
function answerOf(r: ActionCount) {
  const { touched: _t, changed: _c, ...rest } = r;
  return rest;
}

/** Builds `POST /api/keys/forget`; `touched` is every key deleted (for the audit trail). */
export async function forgetKeys(
  ctx: ObserveContext,
  b: Omit<KeyAction, "op" | "ttlMs">,
): Promise<{ body: ForgetResponse; touched: string[] }> {
  const r = await runKeyAction(ctx, { ...b, op: "unlink" });
  return { body: { dryRun: b.dryRun, ...answerOf(r), deleted: r.changed }, touched: r.touched };
}

/** Builds `POST /api/keys/ttl`: a TTL above the handler's policy only with `allowBeyondPolicy`, and then said. */
export async function setKeysTtl(
  ctx: ObserveContext,
  b: Omit<KeyAction, "op"> & { ttlMs: number; allowBeyondPolicy: boolean },
): Promise<{ body: TtlResponse; touched: string[] }> {
  const policy = ttlPolicy(b.service, b.handler);
  const beyondPolicy = b.ttlMs > policy.policyMs;
  if (beyondPolicy && !b.allowBeyondPolicy) {
    throw new BadRequestError(
      `ttlMs: ${b.ttlMs} ms is longer than the handler's TTL policy of ${policy.policyMs} ms (${policy.policySource}); send allowBeyondPolicy: true to set it anyway`,
    );
  }
  const { allowBeyondPolicy: _ignored, ...sel } = b;
  const r = await runKeyAction(ctx, { ...sel, op: "pexpire" });
  return {
    body: { dryRun: b.dryRun, ...answerOf(r), changed: r.changed, ttlMs: b.ttlMs, ...policy, beyondPolicy },
    touched: r.touched,
  };
}
