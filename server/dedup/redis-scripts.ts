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
export const COMPARE_AND_DELETE_LUA = script("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0");
/** Lua: SET NX PX returning the existing value (for Redis < 7.0). One key. */
export const CLAIM_LUA = script(
  "local v = redis.call('GET', KEYS[1]) if v then return v end redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return false",
);

/**
 * Lua, standalone servers only: `SET KEYS[i] ARGV[2i-1] PX ARGV[2i] NX GET` for every key; returns
 * the per-key replies (nil = claimed). Multi-key, so never sent to a Cluster.
 */
export const CLAIM_MANY_LUA = script(
  "local out = {} for i = 1, #KEYS do out[i] = redis.call('SET', KEYS[i], ARGV[2 * i - 1], 'PX', ARGV[2 * i], 'NX', 'GET') end return out",
);
/** Lua, standalone servers only: like {@link CLAIM_MANY_LUA} with one value and TTL for all keys (ARGV[1], ARGV[2]): a third of the arguments. */
export const CLAIM_MANY_SAME_LUA = script(
  "local out = {} for i = 1, #KEYS do out[i] = redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2], 'NX', 'GET') end return out",
);
/** Lua, standalone servers only: compare-and-set of every key from ARGV[1] to ARGV[2] with PX ARGV[3]; 1/0 per key. */
export const COMPARE_AND_SET_MANY_SAME_LUA = script(
  "local out = {} for i = 1, #KEYS do if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('SET', KEYS[i], ARGV[2], 'PX', ARGV[3]) out[i] = 1 else out[i] = 0 end end return out",
);
/**
 * Lua, standalone servers only: compare-and-set of every key from ARGV[1] with PX ARGV[2] to its own
 * value ARGV[2 + i]; 1/0 per key. A batch's `done` marks: one token, one TTL, one value per key
 * (each carries its delivery's position) — 1 argument per key instead of 3.
 */
export const COMPARE_AND_SET_MANY_SAME_EXPECTED_LUA = script(
  "local out = {} for i = 1, #KEYS do if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('SET', KEYS[i], ARGV[2 + i], 'PX', ARGV[2]) out[i] = 1 else out[i] = 0 end end return out",
);
/** Lua, standalone servers only: compare-and-set per key with ARGV triples (expected, value, ttl); returns 1/0 per key. */
export const COMPARE_AND_SET_MANY_LUA = script(
  "local out = {} for i = 1, #KEYS do local b = 3 * i - 2 if redis.call('GET', KEYS[i]) == ARGV[b] then redis.call('SET', KEYS[i], ARGV[b + 1], 'PX', ARGV[b + 2]) out[i] = 1 else out[i] = 0 end end return out",
);
/**
 * Lua, standalone servers only: the unconditional `done` marks of a batch — `SET KEYS[i] ARGV[1 + i]
 * PX ARGV[1] GET` for every key; returns the previous values (nil where absent). One TTL, one value
 * per key: 1 argument per key.
 */
export const MARK_DONE_MANY_LUA = script(
  "local out = {} for i = 1, #KEYS do out[i] = redis.call('SET', KEYS[i], ARGV[1 + i], 'PX', ARGV[1], 'GET') end return out",
);
/**
 * Lua, standalone servers only: {@link MARK_DONE_MANY_LUA} for marks that share our lease token
 * ARGV[2] — values from ARGV[3] — returning only the keys whose previous value was neither absent
 * nor that token, as a flat list of (index, previous value): usually empty. A per-key reply of the
 * token (~30 bytes to encode, send and decode per key) told the client nothing.
 */
export const MARK_DONE_MANY_OURS_LUA = script(
  "local out = {} local t = ARGV[2] for i = 1, #KEYS do local p = redis.call('SET', KEYS[i], ARGV[2 + i], 'PX', ARGV[1], 'GET') if p and p ~= t then out[#out + 1] = i out[#out + 1] = p end end return out",
);
