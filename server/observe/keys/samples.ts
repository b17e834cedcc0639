import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { KeyState } from "@/lib/api/common";
import { DONE_FINGERPRINT_SEPARATOR, DONE_POSITION_PREFIX, isDoneValue } from "@/server/dedup";
import { TTL_BUCKETS, type Accum } from "./accum";
import { evalScript } from "./scripts";
import { countUpstream } from "../core/upstream-counter";
import { readDictOverhead } from "./dict-overhead";

/** Per-handler sample reads: value state, MEMORY USAGE and PTTL. */
export interface SampleStats {
  states: Record<KeyState, number>;
  bytesPerKey: number | null;
  ttlP50: number | null;
  /** Sampled keys per TTL bucket, keys without TTL, and min/max TTL in the sample. */
  buckets: number[];
  noTtl: number;
  minTtl: number;
  maxTtl: number;
  size: number;
  /** Sampled `processing` leases per TTL bucket (the rest of `buckets` are settled keys). */
  leaseBuckets: number[];
  /**
   * Smallest remaining TTL among sampled keys that are not leases (-1: none): the oldest settled
   * key's age is the window minus it, which tells whether the window has filled since start.
   */
  settledMinTtl: number;
}

/**
 * State of a dedup key from its value: the lease marking stores `processing:<token>` then `done`
 * (`done:<topic>:<partition>:<offset>` when the delivery had a position, `#<payload fingerprint>`
 * after it since fingerprints are stored);
 * the release marking stores `claimed:<token>`; the naive marking (and Watermill-style
 * repositories) store `1`.
 */
export function classifyValue(v: string): KeyState {
  if (v.startsWith("processing:") || v === "processing") return "processing";
  if (isDoneValue(v)) return "done"; // `done`, `done:<topic>:<partition>:<offset>`, either with `#<fingerprint>`
  if (v === "1" || v.startsWith("claimed:")) return "marked";
  return "other";
}

/** Bytes of a key's value read to classify it and find its record: `done:` + a topic (≤ 249) + `:<partition>:<offset>` + `#<fingerprint>`. */
export const VALUE_READ_BYTES = 320;

/**
 * The record a `done:<topic>:<partition>:<offset>` value names (the first delivery that processed
 * the message), or null for any other value. Topic names cannot hold `:`, so the last two
 * segments are the partition and the offset.
 */
export function donePosition(v: string): { topic: string; partition: number; offset: string } | null {
  if (!v.startsWith(DONE_POSITION_PREFIX)) return null;
  const hash = v.indexOf(DONE_FINGERPRINT_SEPARATOR);
  const m = /^([A-Za-z0-9._-]{1,249}):(\d{1,7}):(\d{1,19})$/.exec(
    v.slice(DONE_POSITION_PREFIX.length, hash < 0 ? undefined : hash),
  );
  return m ? { topic: m[1]!, partition: Number(m[2]), offset: m[3]! } : null;
}

/**
 * PTTL, `MEMORY USAGE … SAMPLES 0` and the first 64 bytes of the value of each key in ARGV[2..]
 * (keys this master returned to a SCAN), ten keys a chunk, until one more chunk as long as the
 * longest so far (and half again) would pass ARGV[1] µs of server time (`TIME`): one call instead of
 * three commands per key, so a sample costs Node one reply to parse rather than 3 × 200 commands
 * to build and settle. A command that fails (a key of another type, a key not on this master)
 * answers `false` (nil), as its own error did in a pipeline.
 * Reply: { keys described, then pttl, bytes, value per key }.
 */
export const DESCRIBE_SAMPLES_LUA = `
local call, pcall = redis.call, redis.pcall
local t0 = call('TIME')
local s0, u0 = tonumber(t0[1]), tonumber(t0[2])
local budget = tonumber(ARGV[1])
local out = { 0 }
local n, longest, prev = 0, 0, 0
local i = 2
while i <= #ARGV do
  local last = math.min(#ARGV, i + 9)
  for j = i, last do
    local k = ARGV[j]
    local ttl = pcall('PTTL', k)
    local mem, val = false, false
    if type(ttl) ~= 'number' then
      ttl = false
    elseif ttl ~= -2 then
      mem = pcall('MEMORY', 'USAGE', k, 'SAMPLES', '0')
      if type(mem) ~= 'number' then mem = false end
      val = pcall('GETRANGE', k, 0, 63)
      if type(val) ~= 'string' then val = false end
    end
    out[#out + 1] = ttl
    out[#out + 1] = mem
    out[#out + 1] = val
  end
  n = n + last - i + 1
  i = last + 1
  local t = call('TIME')
  local el = (tonumber(t[1]) - s0) * 1000000 + (tonumber(t[2]) - u0)
  longest = math.max(longest, el - prev)
  prev = el
  if el + 1.5 * longest > budget then break end
end
out[1] = n
return out
`;
const DESCRIBE_SAMPLES_SHA = createHash("sha1").update(DESCRIBE_SAMPLES_LUA).digest("hex");

/** One sample key's reads: PTTL, MEMORY USAGE and value head, `null` where the command failed. */
interface KeyReads {
  ttl: number | null;
  mem: number | null;
  val: string | null;
}

/** Keys sent with one {@link DESCRIBE_SAMPLES_LUA} call (it may describe fewer, at its time budget). */
const KEYS_PER_CALL = 200;

/**
 * {@link KeyReads} of `keys` on one master, in budgeted script calls, two in flight (the next one
 * sent while the current one runs).
 */
async function describeKeys(node: Redis, keys: readonly string[], budgetMicros: number): Promise<KeyReads[]> {
  const out = new Array<KeyReads>(keys.length);
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const from = next;
      const batch = keys.slice(from, from + KEYS_PER_CALL);
      next = from + batch.length;
      for (let at = 0; at < batch.length;) {
        const argv = [String(budgetMicros), ...batch.slice(at)];
        const raw = (await countUpstream("redis", () =>
          evalScript(node, DESCRIBE_SAMPLES_LUA, DESCRIBE_SAMPLES_SHA, argv),
        )) as unknown[];
        const n = Number(raw[0]);
        if (!(n >= 1)) throw new Error("inspector sample script: described no key");
        for (let j = 0; j < n; j++) {
          const [ttl, mem, val] = raw.slice(1 + 3 * j, 4 + 3 * j);
          out[from + at + j] = {
            ttl: typeof ttl === "number" ? ttl : null,
            mem: typeof mem === "number" ? mem : null,
            val: typeof val === "string" ? val : null,
          };
        }
        at += n;
      }
    }
  };
  await Promise.all([worker(), worker()]);
  return out;
}

/** What the sample reads of one prefix gathered. */
interface SampleReads {
  states: Record<KeyState, number>;
  bytes: number[];
  ttls: number[];
  leaseTtls: number[];
  settledMin: number;
  noTtl: number;
}

/** One prefix's {@link SampleStats} from its sample reads. */
function statsOf(e: SampleReads): SampleStats {
  const size = e.states.processing + e.states.done + e.states.marked + e.states.other;
  e.ttls.sort((a, b) => a - b);
  const inBucket = (t: number, i: number) =>
    t >= (i === 0 ? 0 : (TTL_BUCKETS[i - 1]!.maxMs ?? 0)) &&
    (TTL_BUCKETS[i]!.maxMs === null || t < TTL_BUCKETS[i]!.maxMs!);
  return {
    leaseBuckets: TTL_BUCKETS.map((_, i) => e.leaseTtls.filter((t) => inBucket(t, i)).length),
    settledMinTtl: e.settledMin,
    states: e.states,
    bytesPerKey: e.bytes.length ? Math.round(e.bytes.reduce((a, b) => a + b, 0) / e.bytes.length) : null,
    ttlP50: e.ttls.length ? e.ttls[Math.floor(e.ttls.length / 2)]! : null,
    buckets: TTL_BUCKETS.map(
      (b, i) =>
        e.ttls.filter((t) => t >= (i === 0 ? 0 : (TTL_BUCKETS[i - 1]!.maxMs ?? 0)) && (b.maxMs === null || t < b.maxMs))
          .length,
    ),
    noTtl: e.noTtl,
    minTtl: e.ttls.length ? e.ttls[0]! : -1,
    maxTtl: e.ttls.length ? e.ttls[e.ttls.length - 1]! : -1,
    size,
  };
}

/**
 * Reads value, MEMORY USAGE and PTTL of each handler's sample keys (at most `limit`) per master, in
 * script calls of at most `budgetMicros` of server time each. A key's bytes are its `MEMORY USAGE`
 * plus its dict overhead (`./dict-overhead.ts`).
 */
export async function readSamples(
  nodes: Redis[],
  accums: Map<string, Accum>,
  limit: number,
  budgetMicros: number,
): Promise<Map<string, SampleStats>> {
  const byNode = new Map<number, Array<{ prefix: string; key: string }>>();
  for (const a of accums.values()) {
    for (const s of a.samples.slice(0, limit)) {
      const list = byNode.get(s.node) ?? [];
      list.push({ prefix: a.prefix, key: s.key });
      byNode.set(s.node, list);
    }
  }
  const acc = new Map<string, SampleReads>();
  for (const [ni, list] of byNode) {
    const node = nodes[ni];
    if (!node) continue;
    const [overhead, reads] = await Promise.all([
      readDictOverhead(node),
      describeKeys(
        node,
        list.map((x) => x.key),
        budgetMicros,
      ),
    ]);
    list.forEach(({ prefix }, j) => {
      const { ttl, mem, val } = reads[j]!;
      if (ttl === -2) return; // expired meanwhile
      const e = acc.get(prefix) ?? {
        states: { processing: 0, done: 0, marked: 0, other: 0 },
        bytes: [],
        ttls: [],
        leaseTtls: [],
        settledMin: -1,
        noTtl: 0,
      };
      if (ttl === -1) e.noTtl++;
      const state = val === null ? "other" : classifyValue(val);
      e.states[state]++;
      if (ttl !== null && ttl >= 0) {
        if (state === "processing") e.leaseTtls.push(ttl);
        else if (e.settledMin < 0 || ttl < e.settledMin) e.settledMin = ttl;
      }
      if (mem !== null)
        e.bytes.push(mem + (overhead ? overhead.perKey + (ttl !== null && ttl >= 0 ? overhead.perKeyWithTtl : 0) : 0));
      if (ttl !== null && ttl >= 0) e.ttls.push(ttl);
      acc.set(prefix, e);
    });
  }
  return new Map([...acc].map(([prefix, e]) => [prefix, statsOf(e)]));
}
