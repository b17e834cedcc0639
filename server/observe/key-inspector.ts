import type { Redis } from "ioredis";
import type { HandlerKeys, KeyLookupResponse, KeysResponse, ScanProgress, TtlBucket } from "@/lib/api-types";
import { PrefixGlobs, splitPrefix } from "./glob";
import { adapt, firstCount, keysWithoutTtl, mergeReply, scaleEstimate, splitByState, TTL_BUCKET_BOUNDS, TTL_BUCKETS, type Accum } from "./key-accum";
import { readSamples, type SampleStats } from "./key-samples";
import { runAggregate, type AggregateReply } from "./key-scripts";
import { masters, nodeId, whenReady, type RedisLike } from "./redis-client";
import { countUpstream } from "./upstream-counter";

/** Options of the {@link KeyInspector}. */
export interface KeyInspectorOptions {
  /** Globs keys must match (`DEDUP_PREFIXES`). @default ["*:dedup:*"] */
  prefixes: readonly string[];
  /** Keyspace size (DBSIZE, summed over masters) up to which counts are exact. @default 2_000_000 */
  exactMaxKeys: number;
  /**
   * Most SCAN COUNT of one chunk, 1..1000. A script call runs chunks until its next one would pass
   * `maxCallMicros`, and the chunk's COUNT is lowered while one chunk takes more than half of it.
   * @default 1000
   */
  scanCount: number;
  /** Keys sampled for an estimate, over all masters (a 20% share within ±3.3% at 99.9%). @default 40_000 */
  estimateSamples: number;
  /** Keys per handler whose value, PTTL and `MEMORY USAGE` are read (uniform sample). 0..2000. @default 500 */
  sampleKeysPerHandler: number;
  /** Minimum time between two scans started by `refresh()`. @default 10_000 */
  refreshMinIntervalMs: number;
  /** A result older than this is refreshed in the background by `ensureFresh()`. @default 60_000 */
  staleAfterMs: number;
  /**
   * Server time (Redis `TIME` inside the script) one call should stay under; `count` halves above
   * it and grows while below half of it. Under a third of the 5 ms budget: on a 2-core VM a
   * hypervisor pause adds 3-4 ms to whatever command runs (a plain `SCAN … COUNT 150` was logged at
   * 3.6 ms, `COUNT 1000` passed 3 ms in 43 of 400 calls), so a call must be short for the pause to
   * stay under 5 ms. 200..4000 µs. @default 1500
   */
  maxCallMicros: number;
  /** Distinct handler prefixes tracked; beyond it keys go to `(other)`. @default 1000 */
  maxHandlers: number;
  /**
   * How the exact scan learns TTLs. `every-key`: the scan script PTTLs each matched key on every
   * master whose `INFO keyspace` shows keys without TTL (keys − expires > 0): exact no-TTL counts
   * and TTL buckets; a master with none is only counted (its no-TTL count is exactly 0) and the
   * buckets then come from the samples. `sample`: SCAN only counts; TTL buckets and keys without
   * TTL are scaled from each handler's uniform sample of `sampleKeysPerHandler` keys (labelled
   * `noTtlExact: false`) unless `INFO keyspace` proves 0. The estimate always scales from samples.
   * @default "every-key"
   */
  ttlCheck: "sample" | "every-key";
}

/** Defaults of {@link KeyInspectorOptions}. */
export const DEFAULT_KEY_INSPECTOR_OPTIONS: KeyInspectorOptions = {
  prefixes: ["*:dedup:*"],
  exactMaxKeys: 2_000_000,
  scanCount: 1000,
  estimateSamples: 40_000,
  sampleKeysPerHandler: 500,
  refreshMinIntervalMs: 10_000,
  staleAfterMs: 60_000,
  maxCallMicros: 1500,
  maxHandlers: 1000,
  ttlCheck: "every-key",
};





/**
 * What the routes read keys through, whatever holds them: the Redis {@link KeyInspector} or the
 * embedded mode's `MemoryInspector` (server/observe/memory-inspector.ts).
 */
export interface KeySource {
  readonly kind: "redis" | "memory";
  readonly prefixes: readonly string[];
  readonly busy: boolean;
  current(): InspectorState;
  recount(): number | null;
  refresh(mode?: "auto" | "exact" | "estimate"): { started: boolean; retryAfterMs: number };
  ensureFresh(): void;
  run(mode?: "auto" | "exact" | "estimate"): Promise<Inspection>;
  /**
   * One page of `<prefix>:*` keys, when the source pages its keys itself (the in-memory stores of
   * this process). Absent on the Redis inspector: the key browser pages Redis under the shared budget.
   * Dispatch on this method, never on the class: route bundles and `instrumentation.ts` load their
   * own copies of the module, so an inspector built in one fails `instanceof` in another.
   */
  browse?(q: { prefix: string; cursor?: string; count: number }): KeysResponse;
  /** Looks `<prefix>:<uuid>` up under at most `maxPrefixes` known prefixes; present with {@link KeySource.browse}. */
  lookup?(q: { uuid: string; prefix?: string }, maxPrefixes: number): Promise<KeyLookupResponse>;
}

/** A finished inspection. */
export interface Inspection {
  mode: "exact" | "estimate";
  startedAt: number;
  finishedAt: number;
  /** DBSIZE summed over the masters at the start. */
  total: number;
  handlers: HandlerKeys[];
  /** Script calls and their slowest server-side duration, for tests and the bench. */
  calls: number;
  maxCallMicros: number;
  /** Estimate runs: keys sampled per master (`host:port`), in proportion to its DBSIZE. */
  drawsByMaster?: Record<string, number>;
}

/** Keys per handler whose value, size and TTL an estimate reads. */
const ESTIMATE_SAMPLE_READS = 200;
/** Estimate script calls kept in flight per master, so Redis never waits for the next one's round trip. */
const ESTIMATE_IN_FLIGHT = 2;
/** Most keys one estimate call is asked for (it stops earlier at its time budget). */
const MAX_DRAWS_PER_CALL = 4000;
/** Random cursors sent with one estimate call (a block of ~16 keys each). */
const CURSORS_PER_CALL = 250;

/** What the inspector knows now. */
export interface InspectorState {
  result: Inspection | null;
  progress: ScanProgress;
  /** Last error (Redis down…), cleared by the next successful run. */
  error: string | null;
}

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
export class KeyInspector implements KeySource {
  readonly kind = "redis" as const;
  private readonly opts: KeyInspectorOptions;
  private readonly globs: PrefixGlobs;
  private state: InspectorState;
  private running: Promise<Inspection> | null = null;
  private lastStart = 0;

  constructor(
    private readonly client: RedisLike,
    opts: Partial<KeyInspectorOptions> = {},
  ) {
    const o = { ...DEFAULT_KEY_INSPECTOR_OPTIONS, ...opts };
    const range = (name: keyof KeyInspectorOptions, v: number, lo: number, hi: number) => {
      if (!Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name}: expected an integer in ${lo}..${hi}, got ${v}`);
    };
    range("exactMaxKeys", o.exactMaxKeys, 0, 1e9);
    range("scanCount", o.scanCount, 1, 1000);
    range("estimateSamples", o.estimateSamples, 100, 1_000_000);
    range("sampleKeysPerHandler", o.sampleKeysPerHandler, 0, 2000);
    if (o.ttlCheck !== "sample" && o.ttlCheck !== "every-key") throw new RangeError(`ttlCheck: expected "sample" or "every-key", got ${String(o.ttlCheck)}`);
    range("refreshMinIntervalMs", o.refreshMinIntervalMs, 0, 3_600_000);
    range("staleAfterMs", o.staleAfterMs, 1000, 86_400_000);
    range("maxCallMicros", o.maxCallMicros, 200, 4000);
    range("maxHandlers", o.maxHandlers, 1, 100_000);
    this.opts = o;
    this.globs = new PrefixGlobs(o.prefixes);
    this.state = { result: null, progress: idleProgress(), error: null };
  }

  /** The configured globs. */
  get prefixes(): readonly string[] {
    return this.globs.globs;
  }

  /** Current result, progress of a running scan, and last error. */
  current(): InspectorState {
    return this.state;
  }

  /** Whether a run is in progress. */
  get busy(): boolean {
    return this.running !== null;
  }

  /**
   * Progress (0..1) of a recount running now, `null` when none runs. **Every page shows
   * `current().result`** — the last completed count, with its `countedAt` — and this beside it
   * ("2,013 keys at 18:20:04 · recount 40 %"), never the partial totals of the running scan.
   */
  recount(): number | null {
    const p = this.state.progress;
    if (!this.running || p.done) return null;
    return p.total > 0 ? Math.min(1, p.scanned / p.total) : 0;
  }

  /**
   * Starts a run in the background unless one runs or the last one started less than
   * `refreshMinIntervalMs` ago. `mode: "estimate"` skips the exact scan.
   */
  refresh(mode: "auto" | "exact" | "estimate" = "auto"): { started: boolean; retryAfterMs: number } {
    if (this.running) return { started: false, retryAfterMs: 1000 };
    const wait = this.lastStart + this.opts.refreshMinIntervalMs - Date.now();
    if (wait > 0) return { started: false, retryAfterMs: wait };
    void this.run(mode).catch(() => {});
    return { started: true, retryAfterMs: 0 };
  }

  /** Starts a background run when there is no result yet or it is older than `staleAfterMs`. */
  ensureFresh(): void {
    if (this.running) return;
    const r = this.state.result;
    const stale = !r || Date.now() - r.finishedAt > this.opts.staleAfterMs;
    const retryDue = this.state.error !== null && Date.now() - this.lastStart > Math.min(this.opts.refreshMinIntervalMs, 5000);
    if ((stale && Date.now() - this.lastStart > this.opts.refreshMinIntervalMs) || (!r && this.lastStart === 0) || retryDue) {
      void this.run("auto").catch(() => {});
    }
  }

  /** Runs one inspection now (or joins the running one) and resolves with its final result. */
  run(mode: "auto" | "exact" | "estimate" = "auto"): Promise<Inspection> {
    if (this.running) return this.running;
    this.lastStart = Date.now();
    // Visible at once: a viewer polling right after `refresh` sees a running scan, not the last one.
    this.state = {
      ...this.state,
      progress: { scanned: 0, total: this.state.progress.total, done: false, mode: mode === "estimate" ? "estimate" : "exact", startedAt: new Date().toISOString(), finishedAt: null },
    };
    const p = this.doRun(mode).then(
      (r) => {
        this.state = { ...this.state, result: r, error: null };
        return r;
      },
      (e: unknown) => {
        this.state = {
          ...this.state,
          error: e instanceof Error ? e.message : String(e),
          progress: { ...this.state.progress, done: true, finishedAt: new Date().toISOString() },
        };
        throw e;
      },
    );
    this.running = p.finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async doRun(mode: "auto" | "exact" | "estimate"): Promise<Inspection> {
    await whenReady(this.client, 1000);
    const nodes = masters(this.client);
    if (nodes.length === 0) throw new Error("redis cluster: no master known yet");
    const sizes = await Promise.all(nodes.map((n) => countUpstream("redis", () => n.dbsize())));
    const total = sizes.reduce((a, b) => a + b, 0);
    // Keys without TTL in the whole database (INFO keyspace: keys − expires): 0 proves every
    // dedup key has one, exactly, whatever the TTL check samples.
    const infos = await Promise.all(nodes.map((n) => countUpstream("redis", () => n.info("keyspace"))));
    const nodeNoTtl = infos.map((info, i) => keysWithoutTtl(info, nodes[i]!.options.db ?? 0));
    const dbNoTtl = nodeNoTtl.reduce((a, b) => a + b, 0);
    const startedAt = Date.now();
    const exact = mode === "exact" || (mode === "auto" && total <= this.opts.exactMaxKeys);
    const progress = (scanned: number, done: boolean, m: "exact" | "estimate", finishedAt: number | null): ScanProgress => ({
      scanned,
      total,
      done,
      mode: m,
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: finishedAt === null ? null : new Date(finishedAt).toISOString(),
    });

    // Estimate first: it answers in tens of milliseconds, and is the answer beyond exactMaxKeys.
    if (!exact || !this.state.result) {
      this.state = { ...this.state, progress: progress(0, false, "estimate", null) };
      const est = await this.estimate(nodes, sizes);
      // A smaller sample than the exact scan's: the first answer should come fast.
      const stats = await readSamples(nodes, est.accums, Math.min(this.opts.sampleKeysPerHandler, ESTIMATE_SAMPLE_READS));
      const handlers = this.build(est.accums, stats, false, est.bounds, progress(est.draws, !exact, "estimate", Date.now()), { bucketsFromSample: true, noTtlFromSample: true }, dbNoTtl);
      const inspection: Inspection = {
        mode: "estimate",
        startedAt,
        finishedAt: Date.now(),
        total,
        handlers,
        calls: est.calls,
        maxCallMicros: est.maxMicros,
        drawsByMaster: est.drawsByMaster,
      };
      if (!exact) {
        this.state = { ...this.state, progress: progress(est.draws, true, "estimate", Date.now()) };
        return inspection;
      }
      // Publish the estimate while the exact scan runs.
      this.state = { ...this.state, result: inspection };
    }

    let scanned = 0;
    this.state = { ...this.state, progress: progress(0, false, "exact", null) };
    const accums = new Map<string, Accum>();
    let calls = 0;
    let maxMicros = 0;
    // PTTL in the scan only where INFO keyspace shows keys without TTL: elsewhere 0 is exact already.
    const everyKey = this.opts.ttlCheck === "every-key";
    const ttlPerKey = nodes.map((_, ni) => everyKey && (nodeNoTtl[ni] ?? 0) > 0);
    const single = this.globs.globs.length === 1;
    await Promise.all(
      nodes.map(async (node, ni) => {
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
              samplesPerGroup: 10,
              matchGlob: single ? this.globs.globs[0]! : "",
              ttlPerKey: ttlPerKey[ni]!,
              budgetMicros: this.opts.maxCallMicros,
            }),
          );
          calls++;
          maxMicros = Math.max(maxMicros, r.micros);
          mergeReply(accums, r, ni, { handlers: this.opts.maxHandlers, samples: this.opts.sampleKeysPerHandler });
          // With SCAN MATCH the script sees only matches; COUNT is about how many keys it visited.
          scanned += single ? Math.max(r.visited, count * r.chunks) : r.visited;
          // One chunk should take at most half the call's budget, so a call holds two or more.
          count = adapt(count, r.micros / r.chunks, this.opts.maxCallMicros / 2, this.opts.scanCount);
          this.state = { ...this.state, progress: progress(Math.min(scanned, total), false, "exact", null) };
          cursor = r.nextCursor;
        } while (cursor !== "0");
      }),
    );
    const stats = await readSamples(nodes, accums, this.opts.sampleKeysPerHandler);
    const finishedAt = Date.now();
    // With SCAN MATCH, `scanned` was counted from COUNT (an approximation); a finished scan visited all.
    const done = progress(single ? total : scanned, true, "exact", finishedAt);
    this.state = { ...this.state, progress: done };
    return {
      mode: "exact",
      startedAt,
      finishedAt,
      total: Math.max(total, scanned),
      // No-TTL counts are exact with every-key; buckets too when every master PTTL'd its keys.
      handlers: this.build(accums, stats, true, null, done, { bucketsFromSample: !ttlPerKey.every(Boolean), noTtlFromSample: !everyKey }, dbNoTtl),
      calls,
      maxCallMicros: maxMicros,
    };
  }

  /** Sampled keys (blocks from random SCAN cursors) on each master in proportion to its size; counts scaled by DBSIZE. */
  private async estimate(nodes: Redis[], sizes: number[]) {
    const total = sizes.reduce((a, b) => a + b, 0);
    // Per master: draws, and per prefix the raw hit counts, to scale and bound per master.
    const perNode: Array<{ draws: number; size: number; accums: Map<string, Accum> }> = [];
    let calls = 0;
    let maxMicros = 0;
    const drawsByMaster: Record<string, number> = {};
    await Promise.all(
      nodes.map(async (node, ni) => {
        const size = sizes[ni] ?? 0;
        const want = total === 0 ? 0 : Math.ceil((this.opts.estimateSamples * size) / total);
        const accums = new Map<string, Accum>();
        let draws = 0;
        let asked = 0; // draws requested by calls in flight or done
        let empty = false;
        // Two calls in flight: each stops at its time budget and returns the draws it did not make.
        const worker = async () => {
          while (asked < want && !empty) {
            const n = Math.min(MAX_DRAWS_PER_CALL, want - asked);
            asked += n;
            const r = await countUpstream("redis", () =>
              runAggregate(node, {
                mode: "sample",
                cursor: "0",
                count: n,
                bucketBoundsMs: TTL_BUCKET_BOUNDS,
                luaPatterns: this.globs.luaPatterns(),
                samplesPerGroup: 2,
                matchGlob: "",
                // Draws only count: TTLs come from the sample reads, so a draw costs half as much.
                ttlPerKey: false,
                budgetMicros: this.opts.maxCallMicros,
                cursors: randomCursors(CURSORS_PER_CALL, size),
              }),
            );
            calls++;
            maxMicros = Math.max(maxMicros, r.micros);
            asked -= n - r.visited;
            if (r.visited === 0) empty = true; // empty database
            draws += r.visited;
            mergeReply(accums, r, ni, { handlers: this.opts.maxHandlers, samples: this.opts.sampleKeysPerHandler });
          }
        };
        await Promise.all(Array.from({ length: ESTIMATE_IN_FLIGHT }, worker));
        perNode.push({ draws, size, accums });
        drawsByMaster[nodeId(node)] = draws;
      }),
    );
    return { ...scaleEstimate(perNode), calls, maxMicros, drawsByMaster };
  }



  private build(
    accums: Map<string, Accum>,
    stats: Map<string, SampleStats>,
    exact: boolean,
    bounds: Map<string, number> | null,
    scan: ScanProgress,
    ttl: { bucketsFromSample: boolean; noTtlFromSample: boolean },
    dbNoTtl: number,
  ): HandlerKeys[] {
    return [...accums.values()]
      .map((a): HandlerKeys => {
        const owner = splitPrefix(a.prefix);
        const s = stats.get(a.prefix);
        // TTLs either came with the keys (every-key scan, or the estimate's draws) or from the
        // handler's uniform sample, scaled to its count.
        const n = s?.size ?? 0;
        const scale = (k: number) => (n > 0 ? Math.round((a.count * k) / n) : 0);
        const ttlFromSample = ttl.bucketsFromSample;
        const counts = ttlFromSample ? TTL_BUCKETS.map((_, i) => scale(s?.buckets[i] ?? 0)) : a.buckets;
        const noTtl = dbNoTtl === 0 ? 0 : ttl.noTtlFromSample ? scale(s?.noTtl ?? 0) : a.noTtl;
        const minTtl = ttlFromSample ? (s?.minTtl ?? -1) : a.minTtl;
        const maxTtl = ttlFromSample ? (s?.maxTtl ?? -1) : a.maxTtl;
        const ttlBuckets: TtlBucket[] = TTL_BUCKETS.map((b, i) => ({
          label: b.label,
          minMs: i === 0 ? 0 : (TTL_BUCKETS[i - 1]!.maxMs ?? 0),
          maxMs: b.maxMs,
          count: counts[i] ?? 0,
          // Leases of the sample scaled like the bucket itself (never more than the bucket holds).
          processing: Math.min(counts[i] ?? 0, scale(s?.leaseBuckets[i] ?? 0)),
        }));
        const split = splitByState(a.count, s?.states ?? { processing: 0, done: 0, marked: 0, other: 0 }, n, exact);
        return {
          service: owner.service,
          handler: owner.handler,
          prefix: a.prefix,
          keyCount: a.count,
          exact,
          errorBound: exact ? 0 : (bounds?.get(a.prefix) ?? 0),
          noTtlCount: noTtl,
          noTtlExact: dbNoTtl === 0 || (exact && !ttl.noTtlFromSample),
          ttlSampled: ttlFromSample || !exact,
          ttlBuckets,
          bytesPerKey: s?.bytesPerKey ?? null,
          states: s?.states ?? { processing: 0, done: 0, marked: 0, other: 0 },
          sampleSize: s?.size ?? 0,
          byState: { processing: split.processing, done: split.done, marked: split.marked, other: split.other, exact: split.exact },
          leaseShare: split.leaseShare,
          settledMinTtlMs: s && s.settledMinTtl >= 0 ? s.settledMinTtl : null,
          countedAt: scan.finishedAt ?? new Date().toISOString(),
          ttlObserved: maxTtl >= 0 ? { minMs: minTtl, maxMs: maxTtl, p50Ms: s?.ttlP50 ?? maxTtl } : null,
          scan,
        };
      })
      .sort((x, y) => x.prefix.localeCompare(y.prefix));
  }
}







/**
 * `n` random SCAN cursors for a dict of about `size` keys: uniform below the next power of two ≥ size
 * (Redis masks a cursor by the table size, so a bigger table still sees uniform bucket indices).
 */
export function randomCursors(n: number, size: number): string[] {
  const bits = Math.max(1, Math.ceil(Math.log2(Math.max(2, size))) + 1);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(String(Math.floor(Math.random() * 2 ** Math.min(bits, 52))));
  return out;
}

function idleProgress(): ScanProgress {
  return { scanned: 0, total: 0, done: false, mode: "exact", startedAt: null, finishedAt: null };
}
