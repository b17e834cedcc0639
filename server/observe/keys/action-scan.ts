/**
 * How the key actions find their keys: a bounded `SCAN` of a handler prefix on every master of
 * Redis, or the in-memory stores' entries (embedded mode), and the in-memory side of acting on them.
 * The Redis side of reading and acting on each key is `./action-keys.ts`.
 */
import { BadRequestError } from "../core/errors";
import { countUpstream } from "../core/upstream-counter";
import { masters, type RedisLike } from "../redis/client";
import { memoryStores } from "@/server/dedup-store";
import type { ReadKey } from "./action-keys";
import { actionBudget } from "./budget";
import { escapeGlob, type PrefixGlobs } from "./glob";

/** Most keys one call matches (call again for the rest: `complete: false`). */
export const MAX_ACTION_KEYS = 100_000;
/** SCAN COUNT of the action's scan (as the key browser's ceiling). */
const SCAN_COUNT = 500;

/** Scans `<prefix>:*` on every master (bounded), returning the keys inside the globs and whether the scan finished. */
export async function scanPrefix(
  redis: RedisLike,
  prefix: string,
  globs: PrefixGlobs,
  deadline: number,
): Promise<{ keys: string[]; complete: boolean }> {
  const budget = actionBudget();
  const keys: string[] = [];
  const match = `${escapeGlob(prefix)}:*`;
  for (const node of masters(redis)) {
    let cursor = "0";
    do {
      if (keys.length >= MAX_ACTION_KEYS || !(await budget.takeWithin(1, deadline - performance.now())))
        return { keys, complete: false };
      const [next, got] = await budget.run(() =>
        countUpstream("redis", () => node.scan(cursor, "MATCH", match, "COUNT", SCAN_COUNT)),
      );
      for (const k of got) if (k.startsWith(`${prefix}:`) && globs.matches(k)) keys.push(k);
      cursor = next;
    } while (cursor !== "0");
  }
  return { keys: keys.slice(0, MAX_ACTION_KEYS), complete: keys.length <= MAX_ACTION_KEYS };
}

/** The in-memory stores' keys of the selection (embedded mode): no idle time there. */
export function readMemory(
  a: { olderThanMs?: number; uuids?: readonly string[] },
  prefix: string,
  globs: PrefixGlobs,
): { read: ReadKey[]; complete: boolean } {
  if (a.olderThanMs !== undefined)
    throw new BadRequestError(
      "olderThanMs: the in-memory store keeps no idle time (it needs Redis' OBJECT IDLETIME); select by uuids or state",
    );
  const wanted = a.uuids ? new Set(a.uuids.map((u) => `${prefix}:${u}`)) : null;
  const read: ReadKey[] = [];
  const now = Date.now();
  for (const store of memoryStores()) {
    for (const e of store.entries()) {
      if (!e.key.startsWith(`${prefix}:`) || !globs.matches(e.key) || (wanted && !wanted.has(e.key))) continue;
      if (read.length >= MAX_ACTION_KEYS) return { read, complete: false };
      read.push({ key: e.key, value: e.value, idleMs: null, ttlMs: e.expiresAt === null ? null : e.expiresAt - now });
    }
  }
  return { read, complete: true };
}

/** Changes each in-memory key that still holds the value read. */
export function actOnMemory(
  keys: ReadonlyMap<string, string>,
  op: "unlink" | "pexpire",
  ttlMs: number,
): { changed: string[]; complete: boolean } {
  const changed: string[] = [];
  for (const store of memoryStores()) {
    for (const [k, v] of keys)
      if (store.get(k) === v && (op === "unlink" ? store.forget?.(k) : store.expire?.(k, ttlMs))) changed.push(k);
  }
  return { changed, complete: true };
}
