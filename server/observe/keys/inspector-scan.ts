/**
 * The exact count's walk over one master, in one of two ways:
 * - {@link scanByScript}: SCAN inside the aggregate script, which PTTLs each matched key (a master
 *   whose `INFO keyspace` shows keys without TTL: exact no-TTL counts and TTL buckets) and groups
 *   the keys by prefix in Lua, returning only per-prefix aggregates.
 * - {@link scanByClient}: where no key's TTL needs reading, the same `SCAN cursor MATCH glob COUNT n`
 *   a plain SCAN loop sends, grouped by prefix in Node. The next SCAN is sent before the current
 *   reply is grouped (its cursor came with the reply), so Node groups while Redis scans.
 * Both keep each call inside `maxCallMicros` of server time (COUNT adapted to the call's `TIME`d
 * duration) and pace the calls to `maxRedisShare` of Redis time.
 */
import type { Redis } from "ioredis";
import { adapt, firstCount, getAccum, mergeReply, offerSample, TTL_BUCKET_BOUNDS, type Accum } from "./accum";
import { prefixOfKey, type PrefixGlobs } from "./glob";
import type { KeyInspectorOptions } from "./inspector-options";
import { runAggregate, type AggregateReply } from "./scripts";
import { countUpstream } from "../core/upstream-counter";

/** What the exact scan gathered so far over all masters. */
export interface ScanTally {
  accums: Map<string, Accum>;
  /** Keys visited (with SCAN MATCH: estimated from COUNT). */
  scanned: number;
  calls: number;
  /** Slowest call's server time (Redis `TIME`). */
  maxMicros: number;
}

/** What one master's walk needs besides the node. */
export interface ScanJob {
  opts: KeyInspectorOptions;
  globs: PrefixGlobs;
  tally: ScanTally;
  /** Index of the master, kept with each sample key. */
  node: number;
  /** Called after each call with the keys visited so far over all masters. */
  progress: () => void;
}

/**
 * SCANs one master to the end in budgeted script calls that PTTL every matched key, paced to
 * `maxRedisShare`; each reply carries up to `samplesPerGroup` sample keys per prefix and chunk.
 */
export async function scanByScript(node: Redis, job: ScanJob, samplesPerGroup: number): Promise<void> {
  const { opts, globs, tally } = job;
  const single = globs.globs.length === 1;
  let cursor = "0";
  let count = firstCount(opts.scanCount);
  do {
    const r: AggregateReply = await countUpstream("redis", () =>
      runAggregate(node, {
        mode: "scan",
        cursor,
        count,
        bucketBoundsMs: TTL_BUCKET_BOUNDS,
        luaPatterns: globs.luaPatterns(),
        samplesPerGroup,
        matchGlob: single ? globs.globs[0]! : "",
        ttlPerKey: true,
        budgetMicros: opts.maxCallMicros,
      }),
    );
    tally.calls++;
    tally.maxMicros = Math.max(tally.maxMicros, r.micros);
    mergeReply(tally.accums, r, job.node, { handlers: opts.maxHandlers, samples: opts.sampleKeysPerHandler });
    // With SCAN MATCH the script sees only matches; COUNT is about how many keys it visited.
    tally.scanned += single ? Math.max(r.visited, count * r.chunks) : r.visited;
    // One chunk should take at most a third of the call's budget, so a call holds two or more
    // and the script's stop rule (the longest chunk so far must still fit) has room.
    count = adapt(count, r.micros / r.chunks, opts.maxCallMicros / 3, opts.scanCount);
    job.progress();
    cursor = r.nextCursor;
    if (cursor !== "0") await pace(r.micros, opts.maxRedisShare);
  } while (cursor !== "0");
}

/**
 * SCANs one master to the end from the client, counting keys per prefix in Node (no TTL read):
 * `SCAN cursor MATCH glob COUNT n` with one configured glob, else `SCAN cursor COUNT n` filtered by
 * the globs here. Each SCAN is sent as `MULTI, TIME, SCAN, TIME, EXEC`, so its server time is known
 * (a round trip would also hold this machine's scheduling delays): COUNT adapts to it against
 * `maxCallMicros`, and the next call waits `server time × (1 / maxRedisShare − 1)`. The next call is
 * sent before this reply is grouped.
 */
export async function scanByClient(node: Redis, job: ScanJob): Promise<void> {
  const { opts, globs, tally } = job;
  const glob = globs.globs.length === 1 ? globs.globs[0]! : null;
  const limits = { handlers: opts.maxHandlers, samples: opts.sampleKeysPerHandler };
  let count = firstCount(opts.scanCount);
  const send = (cursor: string, n: number) =>
    countUpstream("redis", () => timedScan(node, cursor, glob, n)).then((r) => ({ ...r, n }));
  let pending = send("0", count);
  for (;;) {
    const r = await pending;
    tally.calls++;
    tally.maxMicros = Math.max(tally.maxMicros, r.micros);
    count = adapt(count, r.micros, opts.maxCallMicros, opts.scanCount);
    if (r.next !== "0") {
      const wait = paceMs(r.micros, opts.maxRedisShare);
      const next = r.next;
      const n = count;
      pending = wait > 0 ? delay(wait).then(() => send(next, n)) : send(next, n);
      // Not awaited until the next turn: a failure surfaces there (never unhandled in between).
      pending.catch(() => {});
    }
    groupKeys(tally.accums, r.keys, glob === null ? globs : null, job.node, limits);
    tally.scanned += glob === null ? r.keys.length : Math.max(r.keys.length, r.n);
    job.progress();
    if (r.next === "0") return;
  }
}

/** One `SCAN` between two `TIME`s in a transaction: its reply and its server time. */
async function timedScan(
  node: Redis,
  cursor: string,
  glob: string | null,
  n: number,
): Promise<{ next: string; keys: string[]; micros: number }> {
  const m = node.multi().time();
  if (glob === null) m.scan(cursor, "COUNT", n);
  else m.scan(cursor, "MATCH", glob, "COUNT", n);
  const res = await m.time().exec();
  if (!res || res.length !== 3) throw new Error("inspector SCAN: transaction aborted");
  const [[e0, t0], [e1, scan], [e2, t1]] = res as Array<[Error | null, unknown]> as [
    [Error | null, string[]],
    [Error | null, [string, string[]]],
    [Error | null, string[]],
  ];
  const err = e0 ?? e1 ?? e2;
  if (err) throw err;
  const micros = (Number(t1[0]) - Number(t0[0])) * 1_000_000 + (Number(t1[1]) - Number(t0[1]));
  return { next: scan[0], keys: scan[1], micros };
}

/** Counts `keys` per prefix into `accums` (only those matching `filter` when given), offering each as a sample. */
function groupKeys(
  accums: Map<string, Accum>,
  keys: readonly string[],
  filter: PrefixGlobs | null,
  node: number,
  limits: { handlers: number; samples: number },
): void {
  for (const key of keys) {
    if (filter && !filter.matches(key)) continue;
    const prefix = prefixOfKey(key);
    const a = accums.get(prefix) ?? getAccum(accums, accums.size < limits.handlers ? prefix : "(other)");
    a.count++;
    offerSample(a, key, node, limits.samples);
  }
}

/** Milliseconds to wait so that a call of `micros` is at most `share` of the time until the next one starts (0 under 1 ms). */
function paceMs(micros: number, share: number): number {
  const ms = (micros / 1000) * (1 / share - 1);
  return ms >= 1 ? ms : 0;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits so that a call of `micros` is at most `share` of the time until the next one starts. */
function pace(micros: number, share: number): Promise<void> {
  const ms = paceMs(micros, share);
  return ms > 0 ? delay(ms) : Promise.resolve();
}
