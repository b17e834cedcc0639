import type { ScanProgress } from "@/lib/api/handlers";
import { PrefixGlobs } from "./glob";
import { keysWithoutTtl, type Accum } from "./accum";
import { ESTIMATE_SAMPLE_READS, estimateKeys } from "./inspector-estimate";
import { buildHandlers } from "./inspector-handlers";
import { resolveKeyInspectorOptions, type KeyInspectorOptions } from "./inspector-options";
import { BackgroundCount, type CountMode } from "./background-count";
import type { Inspection, KeySource } from "./source";
import { readSamples } from "./samples";
import { scanByClient, scanByScript, type ScanTally } from "./inspector-scan";
import { masters, whenReady, type RedisLike } from "../redis/client";
import { countUpstream } from "../core/upstream-counter";

export {
  DEFAULT_KEY_INSPECTOR_OPTIONS,
  resolveKeyInspectorOptions,
  type KeyInspectorOptions,
} from "./inspector-options";
export { randomCursors } from "./inspector-estimate";
export type { Inspection, InspectorState, KeySource } from "./source";

/**
 * Counts and characterises the dedup keys in Redis per handler prefix, only under the configured
 * globs, without ever blocking Redis: each call (a Lua call running SCAN chunks or blocks from
 * random cursors, or one `SCAN` from the client where no TTL needs reading) stays under
 * `maxCallMicros` of server time. On a Cluster each master is scanned.
 *
 * A run first publishes a sampled estimate (fast), then, when the keyspace is at most
 * `exactMaxKeys`, an exact count by a full SCAN, and reads a sample of each handler's keys
 * (`MEMORY USAGE … SAMPLES 0`, value, PTTL) in budgeted script calls. Results are kept and served from memory;
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
    super({
      staleAfterMs: resolved.staleAfterMs,
      refreshMinIntervalMs: resolved.refreshMinIntervalMs,
      busyRetryAfterMs: 1000,
    });
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
    const progress = (
      scanned: number,
      done: boolean,
      m: "exact" | "estimate",
      finishedAt: number | null,
    ): ScanProgress => ({
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
    const stats = await readSamples(
      nodes,
      est.accums,
      Math.min(this.opts.sampleKeysPerHandler, ESTIMATE_SAMPLE_READS),
      this.opts.maxCallMicros,
    );
    const handlers = buildHandlers(
      est.accums,
      stats,
      false,
      est.bounds,
      progress(est.draws, final, "estimate", Date.now()),
      { bucketsFromSample: true, noTtlFromSample: true },
      run.dbNoTtl,
    );
    if (final) this.state = { ...this.state, progress: progress(est.draws, true, "estimate", Date.now()) };
    return {
      mode: "estimate",
      startedAt: run.startedAt,
      finishedAt: Date.now(),
      total: run.total,
      handlers,
      calls: est.calls,
      maxCallMicros: est.maxMicros,
      drawsByMaster: est.drawsByMaster,
    };
  }

  /**
   * The exact count: a full SCAN of every master (in budgeted script calls that PTTL each key where
   * keys without TTL exist, else by SCAN from the client), then the samples.
   */
  private async exact(run: Run): Promise<Inspection> {
    const { nodes, total, progress } = run;
    this.state = { ...this.state, progress: progress(0, false, "exact", null) };
    const scan: ScanTally = { accums: new Map<string, Accum>(), scanned: 0, calls: 0, maxMicros: 0 };
    // PTTL in the scan only where INFO keyspace shows keys without TTL: elsewhere 0 is exact
    // already, and the keys are counted by SCAN from the client (no script: Node groups them).
    const everyKey = this.opts.ttlCheck === "every-key";
    const ttlPerKey = nodes.map((_, ni) => everyKey && (run.nodeNoTtl[ni] ?? 0) > 0);
    // Each script chunk's reply carries up to this many sample keys per group: enough for twice the
    // sampleKeysPerHandler that readSamples keeps over the whole scan (a chunk visits ≤ scanCount
    // keys), at most 10. Ten per chunk shipped about half of all keys back as samples at 300k keys:
    // reply bytes and client CPU that a plain SCAN loop does not pay.
    const samplesPerGroup = Math.min(
      10,
      Math.ceil((2 * this.opts.sampleKeysPerHandler * this.opts.scanCount) / Math.max(1, total)),
    );
    const report = () => {
      this.state = { ...this.state, progress: run.progress(Math.min(scan.scanned, run.total), false, "exact", null) };
    };
    await Promise.all(
      nodes.map((node, ni) => {
        const job = { opts: this.opts, globs: this.globs, tally: scan, node: ni, progress: report };
        return ttlPerKey[ni] ? scanByScript(node, job, samplesPerGroup) : scanByClient(node, job);
      }),
    );
    const stats = await readSamples(nodes, scan.accums, this.opts.sampleKeysPerHandler, this.opts.maxCallMicros);
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
      handlers: buildHandlers(
        scan.accums,
        stats,
        true,
        null,
        done,
        { bucketsFromSample: !ttlPerKey.every(Boolean), noTtlFromSample: !everyKey },
        run.dbNoTtl,
      ),
      calls: scan.calls,
      maxCallMicros: scan.maxMicros,
    };
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
