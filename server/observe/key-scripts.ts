import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * Lua used by the key inspector. One call visits at most `count` keys (SCAN COUNT ≤ 1000, or that
 * many RANDOMKEY draws), matches them against the configured globs (as Lua patterns), groups them
 * by handler prefix (the key minus its last `:` segment), PTTLs each matched key and returns small
 * per-group aggregates instead of the key names. That keeps each call around a millisecond on the
 * server (it reports its own duration from `TIME` so the caller can shrink `count`), and keeps the
 * reply tiny, which is why the exact count outruns a plain SCAN loop that ships every key to Node.
 *
 * The script declares no KEYS and touches only keys the same node just returned, so on a Redis
 * Cluster it runs on each master against that master's own keys (no cross-node access).
 *
 * ARGV: mode (`scan` | `sample`), cursor (scan) or unused, count, nBounds, bounds…(ms), nPatterns,
 * patterns…, samplesPerGroup, matchGlob, ttlPerKey (`1`: PTTL every matched key; `0`: count only,
 * ~40% faster). With one configured glob, `matchGlob` is it and SCAN's
 * own MATCH (C, faster than Lua patterns) filters; `visited` is then the matched count, and the
 * caller estimates progress from COUNT instead.
 * Reply: { nextCursor, visited, matched, micros, group… } with group =
 * { prefix, count, noTtl, minTtl, maxTtl, { bucket counts (nBounds + 1) }, { sample keys } }.
 */
export const AGGREGATE_LUA = `
local call, find, match = redis.call, string.find, string.match
local mode = ARGV[1]
local count = tonumber(ARGV[3])
local nb = tonumber(ARGV[4])
local bounds = {}
for i = 1, nb do bounds[i] = tonumber(ARGV[4 + i]) end
local np = tonumber(ARGV[5 + nb])
local pats = {}
for i = 1, np do pats[i] = ARGV[5 + nb + i] end
local spg = tonumber(ARGV[6 + nb + np])
local matchGlob = ARGV[7 + nb + np]
local ttlPerKey = ARGV[8 + nb + np] ~= '0'
local t0 = call('TIME')
local keys
local nextc = '0'
if mode == 'scan' then
  local r
  if matchGlob ~= '' then
    r = call('SCAN', ARGV[2], 'MATCH', matchGlob, 'COUNT', count)
  else
    r = call('SCAN', ARGV[2], 'COUNT', count)
  end
  nextc = r[1]
  keys = r[2]
else
  keys = {}
  for i = 1, count do
    local k = call('RANDOMKEY')
    if not k then break end
    keys[#keys + 1] = k
  end
end
local trusted = matchGlob ~= '' and mode == 'scan'
local groups = {}
local order = {}
local matched = 0
for i = 1, #keys do
  local k = keys[i]
  local ok = trusted
  if not ok then
    for j = 1, np do
      if find(k, pats[j]) then ok = true break end
    end
  end
  if ok then
    -- Without per-key TTLs the count is SCAN's word for it (-3: no TTL read; -2 would mean gone).
    local ttl = -3
    if ttlPerKey then ttl = call('PTTL', k) end
    if ttl ~= -2 then
      matched = matched + 1
      local p = match(k, '^(.*):') or k
      local g = groups[p]
      if not g then
        local b = {}
        for x = 1, nb + 1 do b[x] = 0 end
        g = { p, 0, 0, -1, -1, b, {}, 0 }
        groups[p] = g
        order[#order + 1] = p
      end
      g[2] = g[2] + 1
      if ttl == -1 then
        g[3] = g[3] + 1
      elseif ttl >= 0 then
        if g[4] < 0 or ttl < g[4] then g[4] = ttl end
        if ttl > g[5] then g[5] = ttl end
        local bi = nb + 1
        for x = 1, nb do
          if ttl < bounds[x] then bi = x break end
        end
        local b = g[6]
        b[bi] = b[bi] + 1
      end
      if g[8] < spg then
        g[8] = g[8] + 1
        g[7][g[8]] = k
      end
    end
  end
end
local t1 = call('TIME')
local out = { nextc, #keys, matched, (tonumber(t1[1]) - tonumber(t0[1])) * 1000000 + (tonumber(t1[2]) - tonumber(t0[2])) }
for x = 1, #order do
  local g = groups[order[x]]
  out[#out + 1] = { g[1], g[2], g[3], g[4], g[5], g[6], g[7] }
end
return out
`;

const AGGREGATE_SHA = createHash("sha1").update(AGGREGATE_LUA).digest("hex");

/** One handler prefix's aggregate from one script call. */
export interface GroupAggregate {
  prefix: string;
  count: number;
  noTtl: number;
  /** -1 when no key of the group had a TTL. */
  minTtl: number;
  maxTtl: number;
  buckets: number[];
  samples: string[];
}

/** Reply of one script call. */
export interface AggregateReply {
  nextCursor: string;
  visited: number;
  matched: number;
  /** Server-side duration of the call, from Redis `TIME`. */
  micros: number;
  groups: GroupAggregate[];
}

/** Arguments of one script call. */
export interface AggregateArgs {
  mode: "scan" | "sample";
  cursor: string;
  count: number;
  bucketBoundsMs: readonly number[];
  luaPatterns: readonly string[];
  samplesPerGroup: number;
  /** Glob for SCAN MATCH (scan mode with a single configured glob), or "" to match in Lua. */
  matchGlob: string;
  /** PTTL every matched key (exact no-TTL count and TTL buckets) or only count. */
  ttlPerKey: boolean;
}

/** Runs {@link AGGREGATE_LUA} on one node (EVALSHA, loading the script on NOSCRIPT). */
export async function runAggregate(node: Redis, a: AggregateArgs): Promise<AggregateReply> {
  const argv = [
    a.mode,
    a.cursor,
    String(a.count),
    String(a.bucketBoundsMs.length),
    ...a.bucketBoundsMs.map(String),
    String(a.luaPatterns.length),
    ...a.luaPatterns,
    String(a.samplesPerGroup),
    a.matchGlob,
    a.ttlPerKey ? "1" : "0",
  ];
  let raw: unknown;
  try {
    raw = await node.evalsha(AGGREGATE_SHA, 0, ...argv);
  } catch (e) {
    if (!(e instanceof Error) || !e.message.includes("NOSCRIPT")) throw e;
    raw = await node.eval(AGGREGATE_LUA, 0, ...argv);
  }
  return parseReply(raw);
}

function parseReply(raw: unknown): AggregateReply {
  if (!Array.isArray(raw) || raw.length < 4) throw new Error("inspector script: unexpected reply shape");
  const [nextCursor, visited, matched, micros, ...groups] = raw as [unknown, unknown, unknown, unknown, ...unknown[]];
  return {
    nextCursor: String(nextCursor),
    visited: Number(visited),
    matched: Number(matched),
    micros: Number(micros),
    groups: groups.map((g) => {
      const [prefix, count, noTtl, minTtl, maxTtl, buckets, samples] = g as [unknown, unknown, unknown, unknown, unknown, unknown[], unknown[]];
      return {
        prefix: String(prefix),
        count: Number(count),
        noTtl: Number(noTtl),
        minTtl: Number(minTtl),
        maxTtl: Number(maxTtl),
        buckets: buckets.map(Number),
        samples: samples.map(String),
      };
    }),
  };
}

/**
 * PTTL, `MEMORY USAGE … SAMPLES 0` and the first 64 bytes of the value of one key, in one call
 * declared on KEYS[1] so that a Cluster client routes it to the key's master.
 * Reply: { pttl, bytes | nil, value | nil } (value nil for a non-string key).
 */
export const DESCRIBE_KEY_LUA = `
local k = KEYS[1]
local ttl = redis.call('PTTL', k)
if ttl == -2 then return { -2, false, false } end
local mem = redis.pcall('MEMORY', 'USAGE', k, 'SAMPLES', '0')
if type(mem) ~= 'number' then mem = false end
local val = redis.pcall('GETRANGE', k, 0, 63)
if type(val) ~= 'string' then val = false end
return { ttl, mem, val }
`;
