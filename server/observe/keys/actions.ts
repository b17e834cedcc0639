/**
 * The key actions: `POST /api/keys/forget` (delete a handler's keys: by UUID list, or every key
 * by state and idle time) and `POST /api/keys/ttl` (set their TTL). One call touches at most
 * {@link MAX_ACTION_KEYS} keys, only inside `DEDUP_PREFIXES`, under the key browser's shared Redis
 * budget (server/observe/keys/budget.ts): each SCAN and each pipeline of at most
 * {@link ACTION_KEYS_PER_CALL} single-key scripts takes one call of the budget. Cluster-safe:
 * SCAN walks every master, each key's script goes to the master of its slot (`ownerOf`). The
 * check and the change of a key are one script, so a key that changed state meanwhile is left alone.
 */
import type { ForgetResponse, TtlResponse } from "@/lib/api/key-actions";
import { dedupKeyPrefix, TTL_POLICY } from "@/names/dedup";
import type { ObserveContext } from "../context";
import { BadRequestError, ForbiddenError, UpstreamUnavailableError, errorText } from "../errors";
import { escapeGlob, PrefixGlobs } from "./glob";
import { declaredHandlers, declaredPrefix } from "../handler-registry";
import { ownerOf } from "./browser";
import { classifyValue } from "./samples";
import { browseBudget } from "./budget";
import { masters, whenReady, type RedisLike } from "../redis-client";
import { memoryStores } from "@/server/dedup-store";
import { countUpstream } from "../upstream-counter";

/** Most keys one call matches (call again for the rest: `complete: false`). */
export const MAX_ACTION_KEYS = 100_000;
/** Single-key scripts per pipeline (one budget call each). */
export const ACTION_KEYS_PER_CALL = 100;
/** SCAN COUNT of the action's scan (as the key browser's ceiling). */
const SCAN_COUNT = 500;
/** How long one call may wait for the shared budget in total before it answers `complete: false`. */
export const ACTION_BUDGET_WAIT_MS = 10_000;

/**
 * KEYS[1]; ARGV: state filter (`""`, `processing`, `done`), min idle ms (0 = any), action (`count`,
 * `unlink`, `pexpire`), TTL ms. Returns 1 when the key matched (and was changed unless `count`).
 * OBJECT IDLETIME is read before GET, which would reset it.
 */
export const KEY_ACTION_LUA = `
local k = KEYS[1]
local older = tonumber(ARGV[2])
if older > 0 then
  local idle = redis.pcall('OBJECT', 'IDLETIME', k)
  if type(idle) ~= 'number' or idle * 1000 < older then return 0 end
end
local v = redis.pcall('GET', k)
if type(v) ~= 'string' then return 0 end
local st = ARGV[1]
if st == 'processing' and string.sub(v, 1, 10) ~= 'processing' then return 0 end
if st == 'done' and not (v == 'done' or string.sub(v, 1, 5) == 'done:') then return 0 end
if ARGV[3] == 'unlink' then redis.call('UNLINK', k) end
if ARGV[3] == 'pexpire' then redis.call('PEXPIRE', k, ARGV[4]) end
return 1
`;

/** Which keys, and what to do to them. */
export interface KeyAction {
  service: string;
  handler: string;
  uuids?: string[];
  state?: "processing" | "done";
  olderThanMs?: number;
  dryRun: boolean;
  op: "unlink" | "pexpire";
  ttlMs?: number;
}

/** What an action did: keys matched and changed, whether the whole selection was covered. */
export interface ActionCount {
  prefix: string;
  matched: number;
  changed: number;
  complete: boolean;
}

/** The key prefix of a handler: the declared one, else `<service>:dedup:<handler>`. */
export function handlerPrefix(service: string, handler: string): string {
  const d = declaredHandlers().find((h) => h.service === service && h.setup.handler === handler);
  return d ? declaredPrefix(d) : dedupKeyPrefix(service, handler);
}

/** The TTL policy of a handler: its declared window, else the default class's (spec §3). */
export function ttlPolicy(service: string, handler: string): { policyMs: number; policySource: "declared" | "default" } {
  const d = declaredHandlers().find((h) => h.service === service && h.setup.handler === handler);
  return d ? { policyMs: d.setup.ttlMs, policySource: "declared" } : { policyMs: TTL_POLICY.defaultMs, policySource: "default" };
}

function memoryAction(a: KeyAction, prefix: string, globs: PrefixGlobs): ActionCount {
  if (a.olderThanMs !== undefined) throw new BadRequestError("olderThanMs: the in-memory store keeps no idle time (it needs Redis' OBJECT IDLETIME); select by uuids or state");
  const wanted = a.uuids ? new Set(a.uuids.map((u) => `${prefix}:${u}`)) : null;
  let matched = 0;
  let changed = 0;
  for (const store of memoryStores()) {
    const keys: string[] = [];
    for (const e of store.entries()) {
      if (!e.key.startsWith(`${prefix}:`) || !globs.matches(e.key) || (wanted && !wanted.has(e.key))) continue;
      if (a.state && classifyValue(e.value) !== a.state) continue;
      if (matched + keys.length >= MAX_ACTION_KEYS) break;
      keys.push(e.key);
    }
    matched += keys.length;
    if (a.dryRun) continue;
    for (const k of keys) if (a.op === "unlink" ? store.forget?.(k) : store.expire?.(k, a.ttlMs!)) changed++;
  }
  return { prefix, matched, changed, complete: matched < MAX_ACTION_KEYS };
}

async function runScripts(redis: RedisLike, keys: readonly string[], a: KeyAction, deadline: number): Promise<{ matched: number; done: number }> {
  const budget = browseBudget();
  const byNode = new Map<unknown, string[]>();
  for (const k of keys) {
    const node = ownerOf(redis, k);
    byNode.set(node, [...(byNode.get(node) ?? []), k]);
  }
  let matched = 0;
  let done = 0;
  for (const [node, ks] of byNode) {
    for (let i = 0; i < ks.length; i += ACTION_KEYS_PER_CALL) {
      if (!(await budget.takeWithin(1, deadline - performance.now()))) return { matched, done };
      const chunk = ks.slice(i, i + ACTION_KEYS_PER_CALL);
      const p = (node as RedisLike).pipeline();
      for (const k of chunk) p.eval(KEY_ACTION_LUA, 1, k, a.state ?? "", String(a.olderThanMs ?? 0), a.dryRun ? "count" : a.op, String(a.ttlMs ?? 0));
      const res = (await budget.run(() => countUpstream("redis", () => p.exec()))) ?? [];
      for (const [err, v] of res) if (!err && v === 1) matched++;
      done += chunk.length;
    }
  }
  return { matched, done };
}

/** Scans `<prefix>:*` on every master (bounded), returning the keys inside the globs and whether the scan finished. */
async function scanPrefix(redis: RedisLike, prefix: string, globs: PrefixGlobs, deadline: number): Promise<{ keys: string[]; complete: boolean }> {
  const budget = browseBudget();
  const keys: string[] = [];
  const match = `${escapeGlob(prefix)}:*`;
  for (const node of masters(redis)) {
    let cursor = "0";
    do {
      if (keys.length >= MAX_ACTION_KEYS || !(await budget.takeWithin(1, deadline - performance.now()))) return { keys, complete: false };
      const [next, got] = await budget.run(() => countUpstream("redis", () => node.scan(cursor, "MATCH", match, "COUNT", SCAN_COUNT)));
      for (const k of got) if (k.startsWith(`${prefix}:`) && globs.matches(k)) keys.push(k);
      cursor = next;
    } while (cursor !== "0");
  }
  return { keys: keys.slice(0, MAX_ACTION_KEYS), complete: keys.length <= MAX_ACTION_KEYS };
}

/** Runs a key action on Redis or on the in-memory stores (embedded mode); never outside `DEDUP_PREFIXES`. */
export async function runKeyAction(ctx: ObserveContext, a: KeyAction): Promise<ActionCount> {
  const prefix = handlerPrefix(a.service, a.handler);
  const globs = new PrefixGlobs(ctx.prefixes);
  if (!globs.matches(`${prefix}:x`)) throw new ForbiddenError(`keys of ${prefix} are outside DEDUP_PREFIXES (${ctx.prefixes.join(", ")})`);
  if (!ctx.redis) {
    if (ctx.inspector?.kind === "memory") return memoryAction(a, prefix, globs);
    throw new UpstreamUnavailableError("redis: not configured; set REDIS_URL to act on keys");
  }
  const redis = ctx.redis;
  const deadline = performance.now() + ACTION_BUDGET_WAIT_MS;
  try {
    await whenReady(redis, 1000);
    const sel = a.uuids ? { keys: a.uuids.map((u) => `${prefix}:${u}`).filter((k) => globs.matches(k)), complete: true } : await scanPrefix(redis, prefix, globs, deadline);
    const r = await runScripts(redis, sel.keys, a, deadline);
    return { prefix, matched: r.matched, changed: a.dryRun ? 0 : r.matched, complete: sel.complete && r.done === sel.keys.length };
  } catch (e) {
    if (e instanceof Error && "status" in e) throw e;
    throw new UpstreamUnavailableError(`redis: ${errorText(e)}`);
  }
}

/** Builds `POST /api/keys/forget`. */
export async function forgetKeys(ctx: ObserveContext, b: Omit<KeyAction, "op" | "ttlMs">): Promise<ForgetResponse> {
  const r = await runKeyAction(ctx, { ...b, op: "unlink" });
  return { dryRun: b.dryRun, prefix: r.prefix, matched: r.matched, deleted: r.changed, complete: r.complete };
}

/** Builds `POST /api/keys/ttl`: a TTL above the handler's policy only with `allowBeyondPolicy`, and then said. */
export async function setKeysTtl(ctx: ObserveContext, b: Omit<KeyAction, "op"> & { ttlMs: number; allowBeyondPolicy: boolean }): Promise<TtlResponse> {
  const policy = ttlPolicy(b.service, b.handler);
  const beyondPolicy = b.ttlMs > policy.policyMs;
  if (beyondPolicy && !b.allowBeyondPolicy) {
    throw new BadRequestError(`ttlMs: ${b.ttlMs} ms is longer than the handler's TTL policy of ${policy.policyMs} ms (${policy.policySource}); send allowBeyondPolicy: true to set it anyway`);
  }
  const { allowBeyondPolicy: _ignored, ...sel } = b;
  const r = await runKeyAction(ctx, { ...sel, op: "pexpire" });
  return { dryRun: b.dryRun, prefix: r.prefix, matched: r.matched, changed: r.changed, ttlMs: b.ttlMs, ...policy, beyondPolicy, complete: r.complete };
}
