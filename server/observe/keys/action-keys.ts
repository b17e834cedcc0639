/**
 * The key actions' two Redis steps, each one single-key script per key, pipelined per master under
 * the key actions' own budget (readers cannot spend it): {@link readKeys} reads what a selection needs of each key (value, idle
 * time, TTL) and changes nothing; {@link actOnKeys} deletes a key or sets its TTL **only if its
 * value is still the one read** (atomic per key), so the real action acts on what the dry run saw
 * and skips a key that changed since. Which keys a selection takes is decided in TypeScript
 * ({@link chooseKeys}) from the key browser's classification (`classifyValue`), not a copy in Lua.
 */
import type { ListedKey, Selection } from "@/lib/api/key-actions";
import { claimOwnerOf } from "@/names/keys";
import { NAIVE_VALUE } from "@/server/dedup";
import { BadRequestError } from "../core/errors";
import { masters, type RedisLike } from "../redis/client";
import { countUpstream } from "../core/upstream-counter";
import { actionBudget } from "./budget";
import { ownerOf } from "./browser";
import { ownerAlive } from "./lease-owners";
import { classifyValue } from "./samples";

/** Single-key scripts per pipeline (one budget call each). */
export const ACTION_KEYS_PER_CALL = 100;

/**
 * KEYS[1]; ARGV[1] `1` when the selection filters by idle time. Returns `{value, idle s (-1: not
 * kept), PTTL}`, or nil for a key that is gone or not a string. OBJECT IDLETIME is read before GET,
 * which would reset it; under an LFU policy it errors, which fails the script only when the idle
 * time is asked for (the error names the policy's reason).
 */
export const KEY_READ_LUA = `
local k = KEYS[1]
local idle = redis.pcall('OBJECT', 'IDLETIME', k)
if type(idle) == 'table' then
  if ARGV[1] == '1' then return redis.error_reply('IDLETIME ' .. tostring(idle.err)) end
  idle = -1
end
if not idle then return false end
local v = redis.pcall('GET', k)
if type(v) ~= 'string' then return false end
return {v, idle, redis.call('PTTL', k)}
`;

/** KEYS[1]; ARGV: the value read, `unlink` or `pexpire`, TTL ms. 1 when the key still held that value and was changed. */
export const KEY_ACT_LUA = `
local v = redis.pcall('GET', KEYS[1])
if v ~= ARGV[1] then return 0 end
if ARGV[2] == 'unlink' then redis.call('UNLINK', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`;

/** One key as {@link readKeys} read it. */
export interface ReadKey {
  key: string;
  value: string;
  idleMs: number | null;
  ttlMs: number | null;
}

/** Runs one script per key, pipelined per master; per key its reply or error (undefined: not run, the budget ran out). */
async function perKey(
  redis: RedisLike,
  keys: readonly string[],
  deadline: number,
  add: (p: ReturnType<RedisLike["pipeline"]>, key: string) => void,
): Promise<Map<string, [Error | null, unknown]>> {
  const budget = actionBudget();
  const byNode = new Map<unknown, string[]>();
  for (const k of keys) {
    const node = ownerOf(redis, k);
    byNode.set(node, [...(byNode.get(node) ?? []), k]);
  }
  const out = new Map<string, [Error | null, unknown]>();
  for (const [node, ks] of byNode) {
    for (let i = 0; i < ks.length; i += ACTION_KEYS_PER_CALL) {
      if (!(await budget.takeWithin(1, deadline - performance.now()))) return out;
      const chunk = ks.slice(i, i + ACTION_KEYS_PER_CALL);
      const p = (node as RedisLike).pipeline();
      for (const k of chunk) add(p, k);
      const res = (await budget.run(() => countUpstream("redis", () => p.exec()))) ?? [];
      chunk.forEach((k, j) => out.set(k, res[j] ?? [null, null]));
    }
  }
  return out;
}

/** The eviction policy of the server that refused an idle filter (best effort: CONFIG may be disabled). */
async function evictionPolicy(redis: RedisLike): Promise<string> {
  try {
    const r = (await masters(redis)[0]!.config("GET", "maxmemory-policy")) as string[];
    return r[1] ?? "unknown";
  } catch {
    return "not readable (CONFIG GET refused)";
  }
}

/**
 * Reads `keys`: the keys gone or not strings are left out; `complete` false when the budget ran out.
 * @throws BadRequestError when an idle filter is asked for and Redis keeps no idle time (LFU policy).
 */
export async function readKeys(
  redis: RedisLike,
  keys: readonly string[],
  wantIdle: boolean,
  deadline: number,
): Promise<{ read: ReadKey[]; complete: boolean }> {
  const res = await perKey(redis, keys, deadline, (p, k) => p.eval(KEY_READ_LUA, 1, k, wantIdle ? "1" : "0"));
  const read: ReadKey[] = [];
  for (const [key, [err, v]] of res) {
    if (err) {
      if (/IDLETIME/.test(err.message)) {
        throw new BadRequestError(
          `olderThanMs: Redis keeps no idle time under maxmemory-policy ${await evictionPolicy(redis)} (OBJECT IDLETIME answers "${err.message.replace(/^IDLETIME\s*/, "")}"), so an idle filter would match nothing; select by state or UUIDs without it, or use an LRU policy`,
        );
      }
      throw err;
    }
    if (!Array.isArray(v)) continue;
    const [value, idle, pttl] = v as [string, number, number];
    read.push({ key, value: String(value), idleMs: idle >= 0 ? idle * 1000 : null, ttlMs: pttl >= 0 ? pttl : null });
  }
  return { read, complete: res.size === keys.length };
}

/** Whether a stored value is in `state`: `done` is every done form the key browser reads and the naive `1` (a processed message too). */
export function inState(value: string, state: Selection["state"]): boolean {
  if (state === null || state === "any") return true;
  const s = classifyValue(value);
  return state === "done" ? s === "done" || value === NAIVE_VALUE : s === state;
}

/**
 * The keys of `read` the selection takes, each listed as the answer shows it: in its state, idle
 * long enough, and — with `leases: "dead"` — a lease only when its owner is known dead (the rest of
 * the leases are counted in `liveLeasesLeft`).
 */
export function chooseKeys(
  read: readonly ReadKey[],
  sel: Selection,
  live: ReadonlySet<string> | null,
): { chosen: Array<ReadKey & ListedKey>; liveLeasesLeft: number } {
  const chosen: Array<ReadKey & ListedKey> = [];
  let liveLeasesLeft = 0;
  for (const r of read) {
    if (!inState(r.value, sel.state)) continue;
    if (sel.olderThanMs !== null && (r.idleMs === null || r.idleMs < sel.olderThanMs)) continue;
    const state = classifyValue(r.value);
    const owner = state === "processing" ? claimOwnerOf(r.value) : null;
    const alive = state === "processing" ? ownerAlive(owner, live) : null;
    if (state === "processing" && sel.leases === "dead" && alive !== false) {
      liveLeasesLeft++;
      continue;
    }
    chosen.push({ ...r, state, owner, ownerAlive: alive });
  }
  return { chosen, liveLeasesLeft };
}

/** Deletes (or sets the TTL of) each key only if it still holds the value read; the keys changed, and whether the budget let every key be tried. */
export async function actOnKeys(
  redis: RedisLike,
  keys: ReadonlyMap<string, string>,
  op: "unlink" | "pexpire",
  ttlMs: number,
  deadline: number,
): Promise<{ changed: string[]; complete: boolean }> {
  const res = await perKey(redis, [...keys.keys()], deadline, (p, k) =>
    p.eval(KEY_ACT_LUA, 1, k, keys.get(k)!, op, String(ttlMs)),
  );
  const changed: string[] = [];
  for (const [k, [err, v]] of res) if (!err && v === 1) changed.push(k);
  return { changed, complete: res.size === keys.size };
}
