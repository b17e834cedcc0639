import { createHash } from "node:crypto";
import { Command, type Redis } from "ioredis";

/**
 * Lua used by the key inspector. One call runs SCAN chunks of `count` keys (SCAN COUNT ≤ 1000), or
 * (mode `sample`) blocks of ~16 keys, one `SCAN <random cursor> COUNT 16` per cursor given, four
 * blocks a chunk, up to `count` keys, until one more chunk as long as the longest so far (and half
 * again) would take it past `budgetMicros` of server time (measured with `TIME` after each chunk;
 * 0 = one chunk). It matches
 * the keys against the configured globs (as Lua patterns), groups them by handler prefix (the key
 * minus its last `:` segment), PTTLs each matched key when asked and returns small per-group
 * aggregates instead of the key names. Several chunks per call cut the round trips per key counted
 * while each call stays inside the budget; the reply stays tiny.
 *
 * The script declares no KEYS and touches only keys the same node just returned, so on a Redis
 * Cluster it runs on each master against that master's own keys (no cross-node access).
 *
 * ARGV: mode (`scan` | `sample`), cursor (scan) or unused, count, nBounds, bounds…(ms), nPatterns,
 * patterns…, samplesPerGroup (per chunk), matchGlob, ttlPerKey (`1`: PTTL every matched key — exact
 * no-TTL counts and TTL buckets; `0`: count only), budgetMicros, nCursors, cursors… (sample mode).
 * Blocks from random cursors replace RANDOMKEY draws: a SCAN step costs a fraction of a RANDOMKEY
 * on a large dict, and since keys sit in buckets by hash, a block is a uniform sample of keys.
 * With one configured glob, `matchGlob` is it and SCAN's own MATCH (C, faster than Lua patterns)
 * filters; `visited` is then the matched count, and the caller estimates progress from COUNT instead.
 * Reply: { nextCursor, visited, matched, micros, chunks, group… } with group =
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
local budget = tonumber(ARGV[9 + nb + np]) or 0
local BLOCK = 16
local t0 = call('TIME')
local s0, u0 = tonumber(t0[1]), tonumber(t0[2])
local function elapsed()
  local t = call('TIME')
  return (tonumber(t[1]) - s0) * 1000000 + (tonumber(t[2]) - u0)
end
local trusted = matchGlob ~= '' and mode == 'scan'
local groups = {}
local order = {}
local matched = 0
local visited = 0
local chunks = 0
-- The longest chunk so far: another one starts only if one that long (and half again) still fits.
local longest = 0
local prev = 0
local function add(keys)
  visited = visited + #keys
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
          g = { p, 0, 0, -1, -1, b, {}, 0, 0 }
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
        -- Up to spg sample keys per group per chunk (g[9]: the chunk they were counted in).
        if g[9] ~= chunks then g[9] = chunks g[8] = 0 end
        if g[8] < spg then
          g[8] = g[8] + 1
          g[7][#g[7] + 1] = k
        end
      end
    end
  end
end
local nextc = '0'
if mode == 'scan' then
  local cursor = ARGV[2]
  repeat
    local r
    if matchGlob ~= '' then
      r = call('SCAN', cursor, 'MATCH', matchGlob, 'COUNT', count)
    else
      r = call('SCAN', cursor, 'COUNT', count)
    end
    cursor = r[1]
    chunks = chunks + 1
    add(r[2])
    local el = elapsed()
    longest = math.max(longest, el - prev)
    prev = el
  until cursor == '0' or budget <= 0 or el + 1.5 * longest > budget
  nextc = cursor
else
  -- A block of ~BLOCK keys from each random cursor (hash order, so any prefix's share of a block is
  -- its share of the keyspace), until count keys or the budget; four blocks a chunk, so the stop
  -- rule's margin (the longest chunk and half again) stays small beside the budget.
  local nc = tonumber(ARGV[10 + nb + np]) or 0
  local base = 10 + nb + np
  local i = 0
  repeat
    chunks = chunks + 1
    local last = math.min(nc, i + 4)
    while i < last and visited < count do
      i = i + 1
      add(call('SCAN', ARGV[base + i], 'COUNT', BLOCK)[2])
    end
    local el = elapsed()
    longest = math.max(longest, el - prev)
    prev = el
  until i >= nc or visited >= count or budget <= 0 or el + 1.5 * longest > budget
end
local out = { nextc, visited, matched, elapsed(), chunks }
for x = 1, #order do
  local g = groups[order[x]]
  out[#out + 1] = { g[1], g[2], g[3], g[4], g[5], g[6], g[7] }
end
return out
`;

const AGGREGATE_SHA = createHash("sha1").update(AGGREGATE_LUA).digest("hex");

/** A handler prefix's key totals: how many, how many without TTL, the TTL range and buckets. */
export interface PrefixTotals {
  prefix: string;
  count: number;
  noTtl: number;
  /** -1 when no key of the group had a TTL. */
  minTtl: number;
  maxTtl: number;
  buckets: number[];
}

/** One handler prefix's aggregate from one script call. */
export interface GroupAggregate extends PrefixTotals {
  samples: string[];
}

/** Reply of one script call. */
export interface AggregateReply {
  nextCursor: string;
  visited: number;
  matched: number;
  /** Server-side duration of the call, from Redis `TIME`. */
  micros: number;
  /** SCAN chunks (or chunks of four blocks) the call ran inside its budget. */
  chunks: number;
  groups: GroupAggregate[];
}

/** Arguments of one script call. */
export interface AggregateArgs {
  mode: "scan" | "sample";
  cursor: string;
  /** SCAN COUNT of one chunk (scan), or the most draws of the call (sample). */
  count: number;
  bucketBoundsMs: readonly number[];
  luaPatterns: readonly string[];
  samplesPerGroup: number;
  /** Glob for SCAN MATCH (scan mode with a single configured glob), or "" to match in Lua. */
  matchGlob: string;
  /** PTTL every matched key (exact no-TTL count and TTL buckets) or only count. */
  ttlPerKey: boolean;
  /** Server time the call may use; it stops before a chunk that would pass it. 0 = one chunk. */
  budgetMicros: number;
  /** Sample mode: random SCAN cursors, one block of keys each. */
  cursors?: readonly string[];
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
    String(a.budgetMicros),
    String(a.cursors?.length ?? 0),
    ...(a.cursors ?? []),
  ];
  return parseReply(await evalScript(node, AGGREGATE_LUA, AGGREGATE_SHA, argv));
}

/**
 * Runs `lua` on `node` by EVALSHA (EVAL on NOSCRIPT), written to the socket on its own: never
 * grouped by ioredis' auto-pipelining, which sends one group per node at a time — a second call
 * made while one is out waited for its reply, and the two then went out together and ran back to
 * back, with Redis idle in between while Node turned round.
 */
export async function evalScript(node: Redis, lua: string, sha: string, argv: readonly string[]): Promise<unknown> {
  const send = (name: "evalsha" | "eval", first: string) =>
    node.sendCommand(new Command(name, [first, 0, ...argv], { replyEncoding: "utf8" }));
  try {
    return await send("evalsha", sha);
  } catch (e) {
    if (!(e instanceof Error) || !e.message.includes("NOSCRIPT")) throw e;
    return await send("eval", lua);
  }
}

function parseReply(raw: unknown): AggregateReply {
  if (!Array.isArray(raw) || raw.length < 5) throw new Error("inspector script: unexpected reply shape");
  const [nextCursor, visited, matched, micros, chunks, ...groups] = raw as [
    unknown,
    unknown,
    unknown,
    unknown,
    unknown,
    ...unknown[],
  ];
  return {
    nextCursor: String(nextCursor),
    visited: Number(visited),
    matched: Number(matched),
    micros: Number(micros),
    chunks: Math.max(1, Number(chunks)),
    groups: groups.map((g) => {
      const [prefix, count, noTtl, minTtl, maxTtl, buckets, samples] = g as [
        unknown,
        unknown,
        unknown,
        unknown,
        unknown,
        unknown[],
        unknown[],
      ];
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
local val = redis.pcall('GETRANGE', k, 0, 319)
if type(val) ~= 'string' then val = false end
return { ttl, mem, val }
`;
