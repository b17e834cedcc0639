/**
 * The Lua scripts of `RedisRepository`, each with its SHA1 computed once. The one-key scripts work
 * on a Cluster; the `*_MANY_*` ones touch several keys and are sent to standalone servers only.
 */
import { createHash } from "node:crypto";

/** A Lua script and its SHA1, computed once. */
export interface Script {
  source: string;
  sha: string;
}

/** A script of `source` with its SHA1 (for EVALSHA). */
export function script(source: string): Script {
  return { source, sha: createHash("sha1").update(source).digest("hex") };
}

/** Lua: if KEYS[1] holds ARGV[1], set it to ARGV[2] with PX ARGV[3]. One key. */
export const COMPARE_AND_SET_LUA = script(
  "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0",
);
/** Lua: if KEYS[1] holds ARGV[1], delete it. One key. */
export const COMPARE_AND_DELETE_LUA = script(
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
);
/** Lua: if KEYS[1] holds ARGV[1], reset its TTL to PX ARGV[2] (the value is not sent back). One key. */
export const EXTEND_LEASE_LUA = script(
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0",
);
/** Lua: SET NX PX returning the existing value (for Redis < 7.0). One key. */
export const CLAIM_LUA = script(
  "local v = redis.call('GET', KEYS[1]) if v then return v end redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return false",
);

/**
 * Lua, standalone servers only (multi-key, so never sent to a Cluster): runs `body` for every key
 * `KEYS[i]`, after `prelude`, and returns the table `out` the body fills.
 */
function eachKey(body: string, prelude = ""): Script {
  return script(`local out = {} ${prelude}for i = 1, #KEYS do ${body} end return out`);
}

/** Lua loop body: `out[i]` is the reply of `SET KEYS[i] value PX ttl [NX] GET` (the previous value, nil where absent). */
const setGet = (value: string, ttl: string, nx: boolean) =>
  `out[i] = redis.call('SET', KEYS[i], ${value}, 'PX', ${ttl}${nx ? ", 'NX'" : ""}, 'GET')`;

/** Lua loop body: compare-and-set of `KEYS[i]` from `expected` to `value` with PX `ttl`; `out[i]` is 1 when set, else 0. */
const compareAndSet = (expected: string, value: string, ttl: string) =>
  `if redis.call('GET', KEYS[i]) == ${expected} then redis.call('SET', KEYS[i], ${value}, 'PX', ${ttl}) out[i] = 1 else out[i] = 0 end`;

/** Lua, standalone servers only: `SET KEYS[i] ARGV[2i-1] PX ARGV[2i] NX GET` for every key; returns the per-key replies (nil = claimed). */
export const CLAIM_MANY_LUA = eachKey(setGet("ARGV[2 * i - 1]", "ARGV[2 * i]", true));
/** Lua, standalone servers only: like {@link CLAIM_MANY_LUA} with one value and TTL for all keys (ARGV[1], ARGV[2]): a third of the arguments. */
export const CLAIM_MANY_SAME_LUA = eachKey(setGet("ARGV[1]", "ARGV[2]", true));
/** Lua, standalone servers only: compare-and-set of every key from ARGV[1] to ARGV[2] with PX ARGV[3]; 1/0 per key. */
export const COMPARE_AND_SET_MANY_SAME_LUA = eachKey(compareAndSet("ARGV[1]", "ARGV[2]", "ARGV[3]"));
/**
 * Lua, standalone servers only: compare-and-set of every key from ARGV[1] with PX ARGV[2] to its own
 * value ARGV[2 + i]; 1/0 per key. A batch's `done` marks: one token, one TTL, one value per key
 * (each carries its delivery's position) — 1 argument per key instead of 3.
 */
export const COMPARE_AND_SET_MANY_SAME_EXPECTED_LUA = eachKey(compareAndSet("ARGV[1]", "ARGV[2 + i]", "ARGV[2]"));
/** Lua, standalone servers only: compare-and-set per key with ARGV triples (expected, value, ttl); returns 1/0 per key. */
export const COMPARE_AND_SET_MANY_LUA = eachKey(
  `local b = 3 * i - 2 ${compareAndSet("ARGV[b]", "ARGV[b + 1]", "ARGV[b + 2]")}`,
);
/**
 * Lua, standalone servers only: the unconditional `done` marks of a batch — `SET KEYS[i] ARGV[1 + i]
 * PX ARGV[1] GET` for every key; returns the previous values (nil where absent). One TTL, one value
 * per key: 1 argument per key.
 */
export const MARK_DONE_MANY_LUA = eachKey(setGet("ARGV[1 + i]", "ARGV[1]", false));
/**
 * Lua, standalone servers only: {@link MARK_DONE_MANY_LUA} for marks that share our lease token
 * ARGV[2] — values from ARGV[3] — returning only the keys whose previous value was neither absent
 * nor that token, as a flat list of (index, previous value): usually empty. A per-key reply of the
 * token (~30 bytes to encode, send and decode per key) told the client nothing.
 */
export const MARK_DONE_MANY_OURS_LUA = eachKey(
  "local p = redis.call('SET', KEYS[i], ARGV[2 + i], 'PX', ARGV[1], 'GET') if p and p ~= t then out[#out + 1] = i out[#out + 1] = p end",
  "local t = ARGV[2] ",
);
