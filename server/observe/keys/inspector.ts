import type { ScanProgress } from "@/lib/api/handlers";
import { PrefixGlobs } from "./glob";
import { adapt, firstCount, keysWithoutTtl, mergeReply, TTL_BUCKET_BOUNDS, type Accum } from "./accum";
import { ESTIMATE_SAMPLE_READS, estimateKeys } from "./inspector-estimate";
import { buildHandlers } from "./inspector-handlers";
import { resolveKeyInspectorOptions, type KeyInspectorOptions } from "./inspector-options";
import { BackgroundCount, type CountMode } from "./background-count";
import type { Inspection, KeySource } from "./source";
import { readSamples } from "./samples";
import { runAggregate, type AggregateReply } from "./scripts";
import { masters, whenReady, type RedisLike } from "../redis-client";
import { countUpstream } from "../upstream-counter";

export { DEFAULT_KEY_INSPECTOR_OPTIONS, resolveKeyInspectorOptions, type KeyInspectorOptions } from "./inspector-options";
export { randomCursors } from "./inspector-estimate";
export type { Inspection, InspectorState, KeySource } from "./source";

/**
 * Counts and characterises the dedup keys in Redis per handler prefix, only under the configured
 * globs, without ever blocking Redis: one Lua call runs SCAN chunks (or blocks from random cursors)
 * until `maxCallMicros` of server time. On a Cluster each master is scanned.
 *
 * A run first publishes a sampled estimate (fast), then, when the keyspace is at most
 * `exactMaxKeys`, an exact count by a full SCAN, and reads a sample of each handler's keys
 * (`MEMORY USAGE … SAMPLES 0`, value, PTTL) in pipelines. Results are kept and served from memory;
 * `ensureFresh()` refreshes them in the background.
 */
export class KeyInspector extends BackgroundCount implements KeySource {
  readonly kind = "redis" as const;
  private readonly opts: KeyInspectorOptions;
  private readonly globs: PrefixGlobs;

  constructor(
    private readonly client: RedisLike,
    opts: Partial<KeyInspectorOptions> = {},
  ) {
    const resolved = resolveKeyInspectorOptions(opts);
    super({ staleAfterMs: resolved.staleAfterMs, refreshMinIntervalMs: resolved.refreshMinIntervalMs, busyRetryAfterMs: 1000 });
    this.opts = resolved;
    this.globs = new PrefixGlobs(this.opts.prefixes);
  }

  /** The configured globs. */
  get prefixes(): readonly string[] {
    return this.globs.globs;
  }

  /**
   * One inspection. `mode: "estimate"` skips the exact scan; `"exact"` is `"auto"`: **no caller
   * overrides `exactMaxKeys`**, a keyspace above it is estimated.
   */
  protected async count(mode: CountMode): Promise<Inspection> {
    const run = await this.prepare();
    // `exact` asks for no more than `auto`: the operator's limit decides (a caller's parameter must not).
    const exact = mode !== "estimate" && run.total <= this.opts.exactMaxKeys;
    // Estimate first: it answers in tens of milliseconds, and is the answer beyond exactMaxKeys.
    if (!exact || !this.state.result) {
      const estimate = await this.estimate(run, !exact);
      if (!exact) return estimate;
      // Publish the estimate while the exact scan runs.
      this.state = { ...this.state, result: estimate };
    }
    return this.exact(run);
  }

  /** The masters, their sizes and keys without TTL, and the progress builder of one run. */
  private async prepare(): Promise<Run> {
    await whenReady(this.client, 1000);
    const nodes = masters(this.client);
    if (nodes.length === 0) throw new Error("redis cluster: no master known yet");
    const sizes = await Promise.all(nodes.map((n) => countUpstream("redis", () => n.dbsize())));
    const total = sizes.reduce((a, b) => a + b, 0);
    // Keys without TTL in the whole database (INFO keyspace: keys − expires): 0 proves every
    // dedup key has one, exactly, whatever the TTL check samples.
    const infos = await Promise.all(nodes.map((n) => countUpstream("redis", () => n.info("keyspace"))));
    const nodeNoTtl = infos.map((info, i) => keysWithoutTtl(info, nodes[i]!.options.db ?? 0));
    const startedAt = Date.now();
    const progress = (scanned: number, done: boolean, m: "exact" | "estimate", finishedAt: number | null): ScanProgress => ({
      scanned,
      total,
      done,
      mode: m,
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: finishedAt === null ? null : new Date(finishedAt).toISOString(),
    });
    return { nodes, sizes, total, nodeNoTtl, dbNoTtl: nodeNoTtl.reduce((a, b) => a + b, 0), startedAt, progress };
  }

  /** The sampled estimate; `final` when it is the run's answer (the keyspace is above `exactMaxKeys`). */
  private async estimate(run: Run, final: boolean): Promise<Inspection> {
    const { nodes, progress } = run;
    this.state = { ...this.state, progress: progress(0, false, "estimate", null) };
    const est = await estimateKeys(nodes, run.sizes, this.opts, this.globs);
    // A smaller sample than the exact scan's: the first answer should come fast.
    const stats = await readSamples(nodes, est.accums, Math.min(this.opts.sampleKeysPerHandler, ESTIMATE_SAMPLE_READS));
    const handlers = buildHandlers(est.accums, stats, false, est.bounds, progress(est.draws, final, "estimate", Date.now()), { bucketsFromSample: true, noTtlFromSample: true }, run.dbNoTtl);
    if (final) this.state = { ...this.state, progress: progress(est.draws, true, "estimate", Date.now()) };
    return { mode: "estimate", startedAt: run.startedAt, finishedAt: Date.now(), total: run.total, handlers, calls: est.calls, maxCallMicros: est.maxMicros, drawsByMaster: est.drawsByMaster };
  }

  /** The exact count: a full SCAN of every master in budgeted script calls, then the samples. */
  private async exact(run: Run): Promise<Inspection> {
    const { nodes, total, progress } = run;
    this.state = { ...this.state, progress: progress(0, false, "exact", null) };
    const scan: ScanTally = { accums: new Map<string, Accum>(), scanned: 0, calls: 0, maxMicros: 0 };
    // PTTL in the scan only where INFO keyspace shows keys without TTL: elsewhere 0 is exact already.
    const everyKey = this.opts.ttlCheck === "every-key";
    const ttlPerKey = nodes.map((_, ni) => everyKey && (run.nodeNoTtl[ni] ?? 0) > 0);
    // Each chunk's reply carries up to this many sample keys per group: enough for twice the
    // sampleKeysPerHandler that readSamples keeps over the whole scan (a chunk visits ≤ scanCount
    // keys), at most 10. Ten per chunk shipped about half of all keys back as samples at 300k keys:
    // reply bytes and client CPU that a plain SCAN loop does not pay.
    const samplesPerGroup = Math.min(10, Math.ceil((2 * this.opts.sampleKeysPerHandler * this.opts.scanCount) / Math.max(1, total)));
    await Promise.all(nodes.map((node, ni) => this.scanMaster(run, scan, node, ni, { ttlPerKey: ttlPerKey[ni]!, samplesPerGroup })));
    const stats = await readSamples(nodes, scan.accums, this.opts.sampleKeysPerHandler);
    const finishedAt = Date.now();
    // With SCAN MATCH, `scanned` was counted from COUNT (an approximation); a finished scan visited all.
    const done = progress(this.globs.globs.length === 1 ? total : scan.scanned, true, "exact", finishedAt);
    this.state = { ...this.state, progress: done };
    return {
      mode: "exact",
      startedAt: run.startedAt,
      finishedAt,
      total: Math.max(total, scan.scanned),
      // No-TTL counts are exact with every-key; buckets too when every master PTTL'd its keys.
      handlers: buildHandlers(scan.accums, stats, true, null, done, { bucketsFromSample: !ttlPerKey.every(Boolean), noTtlFromSample: !everyKey }, run.dbNoTtl),
      calls: scan.calls,
      maxCallMicros: scan.maxMicros,
    };
  }

  /** SCANs one master to the end, `maxCallMicros` of server time per call, paced to `maxRedisShare`. */
  private async scanMaster(run: Run, scan: ScanTally, node: RedisNode, ni: number, per: { ttlPerKey: boolean; samplesPerGroup: number }): Promise<void> {
    const single = this.globs.globs.length === 1;
    let cursor = "0";
    let count = firstCount(this.opts.scanCount);
    do {
      const r: AggregateReply = await countUpstream("redis", () =>
        runAggregate(node, {
          mode: "scan",
          cursor,
          count,
          bucketBoundsMs: TTL_BUCKET_BOUNDS,
          luaPatterns: this.globs.luaPatterns(),
          samplesPerGroup: per.samplesPerGroup,
          matchGlob: single ? this.globs.globs[0]! : "",
          ttlPerKey: per.ttlPerKey,
          budgetMicros: this.opts.maxCallMicros,
        }),
      );
      scan.calls++;
      scan.maxMicros = Math.max(scan.maxMicros, r.micros);
      mergeReply(scan.accums, r, ni, { handlers: this.opts.maxHandlers, samples: this.opts.sampleKeysPerHandler });
      // With SCAN MATCH the script sees only matches; COUNT is about how many keys it visited.
      scan.scanned += single ? Math.max(r.visited, count * r.chunks) : r.visited;
      // One chunk should take at most a third of the call's budget, so a call holds two or more
      // and the script's stop rule (the longest chunk so far must still fit) has room.
      count = adapt(count, r.micros / r.chunks, this.opts.maxCallMicros / 3, this.opts.scanCount);
      this.state = { ...this.state, progress: run.progress(Math.min(scan.scanned, run.total), false, "exact", null) };
      cursor = r.nextCursor;
      if (cursor !== "0") await pace(r.micros, this.opts.maxRedisShare);
    } while (cursor !== "0");
  }
}

/** One master of the inspected Redis. */
type RedisNode = ReturnType<typeof masters>[number];

/** What one run knows before it counts. */
interface Run {
  nodes: RedisNode[];
  sizes: number[];
  /** DBSIZE summed over the masters. */
  total: number;
  /** Keys without TTL per master (INFO keyspace), and their sum. */
  nodeNoTtl: number[];
  dbNoTtl: number;
  startedAt: number;
  progress: (scanned: number, done: boolean, m: "exact" | "estimate", finishedAt: number | null) => ScanProgress;
}

/** What the exact scan gathered so far over all masters. */
interface ScanTally {
  accums: Map<string, Accum>;
  scanned: number;
  calls: number;
  maxMicros: number;
}

/** Waits so that a call of `micros` is at most `share` of the time until the next one starts. */
function pace(micros: number, share: number): Promise<void> {
  const ms = (micros / 1000) * (1 / share - 1);
  return ms >= 1 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
