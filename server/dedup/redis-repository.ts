import { clusterSlot } from "./cluster-slot";
import {
  CLAIM_LUA,
  CLAIM_MANY_LUA,
  CLAIM_MANY_SAME_LUA,
  COMPARE_AND_DELETE_LUA,
  COMPARE_AND_SET_LUA,
  COMPARE_AND_SET_MANY_LUA,
  COMPARE_AND_SET_MANY_SAME_EXPECTED_LUA,
  COMPARE_AND_SET_MANY_SAME_LUA,
  MARK_DONE_MANY_LUA,
  type Script,
} from "./redis-scripts";
import type { ClaimReply, ClaimRequest, CompareAndSetRequest, DedupRepository, MarkDoneRequest } from "./repository";

/** The pipeline part of {@link DedupRedisClient} (ioredis `Pipeline` fits). */
export interface DedupRedisPipeline {
  call(command: string, ...args: Array<string | number>): unknown;
  exec(): Promise<Array<[Error | null, unknown]> | null>;
}

/**
 * The narrow Redis client the repository needs. An ioredis `Redis` or `Cluster` fits as is; the
 * library imports no Redis runtime. Recommended ioredis options: {@link RECOMMENDED_IOREDIS_OPTIONS}.
 */
export interface DedupRedisClient {
  call(command: string, ...args: Array<string | number>): Promise<unknown>;
  pipeline(): DedupRedisPipeline;
  /** true on an ioredis `Cluster`: batches are then split by node. */
  readonly isCluster?: boolean;
  /** ioredis `Cluster.slots`: slot → node keys (`host:port`, master first). */
  readonly slots?: ReadonlyArray<ReadonlyArray<string> | undefined>;
  /** ioredis' connection state (`"ready"` when commands can be served); read to classify failures. */
  readonly status?: string;
  /** ioredis' event emitter: `close`, `end`, `reconnecting`, `node error` and `ready` mark when the connection was lost and back. */
  on?(event: string, listener: (...args: unknown[]) => void): unknown;
}

/**
 * ioredis options that make the failure modes work: a command fails after one reconnect attempt
 * (`redis_conn`) instead of waiting in the offline queue for 20 (which would only ever show up as
 * `redis_timeout`), and auto-pipelining batches concurrent claims into one write.
 */
export const RECOMMENDED_IOREDIS_OPTIONS = {
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  enableAutoPipelining: true,
} as const;

/** Options of {@link RedisRepository}. */
export interface RedisRepositoryOptions {
  /**
   * How a batch is sent to a standalone server: `"script"` = one `EVALSHA` per chunk of
   * `maxScriptKeys` keys that runs the per-key `SET NX PX GET` / compare-and-set inside (about 5×
   * less client CPU than one pipelined command per key, measured by `npm run bench:dedup`);
   * `"pipeline"` = one pipelined single-key command per key. **On a Cluster batches always use
   * per-node pipelines of single-key commands**: a multi-key script would fail with CROSSSLOT.
   * @default "script"
   */
  batchCommand?: "script" | "pipeline";
  /** Keys per batch script call (bounds how long one script blocks the server). @default 1000 */
  maxScriptKeys?: number;
  /**
   * How a claim is sent: `"set-nx-get"` = `SET key value NX PX ttl GET` (one command, Redis ≥ 7.0);
   * `"lua"` = a one-key script with the same result, for Redis 6.2.
   * @default "set-nx-get"
   */
  claimCommand?: "set-nx-get" | "lua";
  /**
   * How a batch's `done` marks are sent to a standalone server: `"pipeline"` = one pipelined native
   * `SET key done:<position> PX ttl GET` per key; `"script"` = one `EVALSHA` per chunk of
   * `maxScriptKeys` keys running the same `SET … GET` inside. On a Cluster always per-node pipelines.
   * @default "script"
   */
  markCommand?: "script" | "pipeline";
}

/** Defaults of {@link RedisRepositoryOptions}. */
export const DEFAULT_REDIS_REPOSITORY_OPTIONS = {
  batchCommand: "script",
  maxScriptKeys: 1000,
  claimCommand: "set-nx-get",
  markCommand: "script",
} as const satisfies Required<RedisRepositoryOptions>;

/** `performance.now()` of the last moment a client's connection was seen lost, and of its last `ready`. */
interface ConnectionTimes {
  lostAt: number;
  readyAt: number;
}

/** One set of listeners per client, however many repositories share it (no listener leak). */
const WATCHED = new WeakMap<DedupRedisClient, ConnectionTimes>();

function watchConnection(client: DedupRedisClient): ConnectionTimes {
  let w = WATCHED.get(client);
  if (w) return w;
  const times: ConnectionTimes = { lostAt: -Infinity, readyAt: -Infinity };
  w = times;
  WATCHED.set(client, times);
  if (typeof client.on === "function") {
    const lost = () => void (times.lostAt = performance.now());
    for (const ev of ["close", "end", "reconnecting", "node error"]) client.on(ev, lost);
    client.on("ready", () => void (times.readyAt = performance.now()));
  }
  return times;
}

function chunks<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

function isNoScript(e: unknown): boolean {
  return e instanceof Error && e.message.startsWith("NOSCRIPT");
}

function asReply(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  if (Buffer.isBuffer(v)) return v.toString("utf8");
  return String(v);
}

/**
 * The dedup store on Redis, shared by every replica (spec §2). Works on a standalone server and on
 * Redis Cluster: on a Cluster every command and script touches ONE key (no CROSSSLOT); only the
 * optional batch scripts of a standalone server touch several (`batchCommand`). Scripts are called by
 * SHA (`EVALSHA`) and fall back to `EVAL` on `NOSCRIPT`, which also loads them on that node — so
 * each node loads each script once, on first use. Batches are one pipeline (on a Cluster, one per
 * node, sent in parallel).
 */
export class RedisRepository implements DedupRepository {
  readonly kind = "redis" as const;
  private readonly opts: Required<RedisRepositoryOptions>;
  private readonly watch: ConnectionTimes;

  constructor(
    private readonly client: DedupRedisClient,
    options: RedisRepositoryOptions = {},
  ) {
    this.opts = { ...DEFAULT_REDIS_REPOSITORY_OPTIONS, ...options };
    if (!["set-nx-get", "lua"].includes(this.opts.claimCommand)) throw new RangeError('RedisRepository: claimCommand must be "set-nx-get" or "lua"');
    if (!["script", "pipeline"].includes(this.opts.markCommand)) throw new RangeError('RedisRepository: markCommand must be "script" or "pipeline"');
    if (!["script", "pipeline"].includes(this.opts.batchCommand)) throw new RangeError('RedisRepository: batchCommand must be "script" or "pipeline"');
    if (!(Number.isInteger(this.opts.maxScriptKeys) && this.opts.maxScriptKeys >= 1 && this.opts.maxScriptKeys <= 100_000)) throw new RangeError("RedisRepository: maxScriptKeys must be an integer in [1, 100000]");
    if (!client || typeof client.call !== "function") throw new RangeError("RedisRepository: client must be an ioredis Redis or Cluster (or implement DedupRedisClient)");
    this.watch = watchConnection(client);
  }

  /**
   * True when the client's connection was not ready at some moment since `since`: its `status` is
   * not `"ready"` now, or it was lost or came back (so it had been down) after `since`. A client
   * without `status` or events is never called lost (its errors are classified by their code).
   */
  connectionLostSince(since: number): boolean {
    const s = this.client.status;
    if (s !== undefined && s !== "ready") return true;
    return this.watch.lostAt >= since || this.watch.readyAt >= since;
  }

  async claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    if (this.opts.claimCommand === "lua") return asReply(await this.evalScript(CLAIM_LUA, key, value, Math.ceil(ttlMs)));
    return asReply(await this.client.call("SET", key, value, "PX", Math.ceil(ttlMs), "NX", "GET"));
  }

  private get scriptBatches(): boolean {
    return this.opts.batchCommand === "script" && !this.client.isCluster;
  }

  /** The batch claim script uses `SET … NX GET` (Redis ≥ 7.0): with `claimCommand: "lua"` batches are pipelined. */
  private get scriptClaims(): boolean {
    return this.scriptBatches && this.opts.claimCommand === "set-nx-get";
  }

  async claimBatch(requests: readonly ClaimRequest[]): Promise<ClaimReply[]> {
    if (requests.length === 0) return [];
    if (this.scriptClaims) {
      const parts = await Promise.all(
        chunks(requests, this.opts.maxScriptKeys).map(async (part) => {
          const args: Array<string | number> = [];
          for (const r of part) args.push(r.key);
          const first = part[0]!;
          // One value for the whole batch (the Deduplicator's batch token) → 1 argument per key, not 3.
          const same = part.every((r) => r.value === first.value && r.ttlMs === first.ttlMs);
          if (same) args.push(first.value, Math.ceil(first.ttlMs));
          else for (const r of part) args.push(r.value, Math.ceil(r.ttlMs));
          const res = (await this.evalScriptKeys(same ? CLAIM_MANY_SAME_LUA : CLAIM_MANY_LUA, part.length, args)) as unknown[];
          return part.map((_, i) => asReply(res[i]));
        }),
      );
      return parts.flat();
    }
    return this.perNode(
      requests,
      (p, r) => (this.opts.claimCommand === "lua" ? p.call("EVALSHA", CLAIM_LUA.sha, 1, r.key, r.value, Math.ceil(r.ttlMs)) : p.call("SET", r.key, r.value, "PX", Math.ceil(r.ttlMs), "NX", "GET")),
      (r) => this.claim(r.key, r.value, r.ttlMs),
    );
  }

  /**
   * One pipeline per node (one in all when not a Cluster), sent in parallel; replies in request
   * order, a failed command an `Error` in its slot. `single` sends one request on its own: when the
   * slots are not known yet, when a Cluster refuses a whole per-node pipeline while its slots move
   * (or, with `resendRefused`, one of its commands), and for a `NOSCRIPT` reply.
   */
  private async perNode<R extends { key: string }>(requests: readonly R[], add: (p: DedupRedisPipeline, r: R) => unknown, single: (r: R) => Promise<string | null>, resendRefused = false): Promise<ClaimReply[]> {
    const one = (r: R) => single(r).catch((e: unknown) => e as Error);
    const groups = this.groupByNode(requests);
    // Cluster slots not known yet (first call before the cluster is ready): key by key.
    if (!groups) return Promise.all(requests.map(one));
    const out: ClaimReply[] = new Array<ClaimReply>(requests.length);
    await Promise.all(
      groups.map(async (idx) => {
        const p = this.client.pipeline();
        for (const i of idx) add(p, requests[i]!);
        let res: Awaited<ReturnType<typeof p.exec>>;
        try {
          res = await p.exec();
        } catch (e) {
          // A Cluster refuses a whole per-node pipeline while its slots move (resharding: "All keys
          // in the pipeline should belong to the same slots allocation group"). That is no store
          // failure: send this group key by key, each call following MOVED/ASK on its own.
          if (!this.client.isCluster) throw e;
          await Promise.all(idx.map(async (i) => (out[i] = await one(requests[i]!))));
          return;
        }
        if (!res) throw new Error("RedisRepository: pipeline aborted (connection lost)");
        await Promise.all(
          idx.map(async (reqIndex, j) => {
            const [err, v] = res[j] ?? [new Error("missing pipeline reply"), null];
            // With `resendRefused` (the done marks), a command a Cluster refused inside the pipeline
            // (MOVED/ASK/TRYAGAIN while slots move: it did not run) is sent again alone. A refused
            // claim stays an Error: the Deduplicator claims that message again at its turn.
            out[reqIndex] = err && (isNoScript(err) || (resendRefused && this.client.isCluster)) ? await one(requests[reqIndex]!) : (err ?? asReply(v));
          }),
        );
      }),
    );
    return out;
  }

  async compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    return Number(await this.evalScript(COMPARE_AND_SET_LUA, key, expected, value, Math.ceil(ttlMs))) === 1;
  }

  async compareAndSetBatch(requests: readonly CompareAndSetRequest[]): Promise<boolean[]> {
    if (!this.scriptBatches) return Promise.all(requests.map((r) => this.compareAndSet(r.key, r.expected, r.value, r.ttlMs)));
    const parts = await Promise.all(
      chunks(requests, this.opts.maxScriptKeys).map(async (part) => {
        const args: Array<string | number> = [];
        for (const r of part) args.push(r.key);
        const first = part[0]!;
        const sameExpected = part.every((r) => r.expected === first.expected && r.ttlMs === first.ttlMs);
        const same = sameExpected && part.every((r) => r.value === first.value);
        let s: Script;
        if (same) {
          s = COMPARE_AND_SET_MANY_SAME_LUA;
          args.push(first.expected, first.value, Math.ceil(first.ttlMs));
        } else if (sameExpected) {
          s = COMPARE_AND_SET_MANY_SAME_EXPECTED_LUA;
          args.push(first.expected, Math.ceil(first.ttlMs));
          for (const r of part) args.push(r.value);
        } else {
          s = COMPARE_AND_SET_MANY_LUA;
          for (const r of part) args.push(r.expected, r.value, Math.ceil(r.ttlMs));
        }
        const res = (await this.evalScriptKeys(s, part.length, args)) as unknown[];
        return part.map((_, i) => Number(res[i]) === 1);
      }),
    );
    return parts.flat();
  }

  /** The unconditional `done` mark: `SET key value PX ttl GET` (Redis ≥ 6.2), resolving the previous value. */
  async markDone(key: string, value: string, ttlMs: number): Promise<string | null> {
    // On a Cluster through a one-command pipeline, like the scripts (`send`): measured in the
    // resharding test, a plain auto-pipelined call could fail with MOVED while slots moved.
    return asReply(await this.send("SET", key, value, "PX", Math.ceil(ttlMs), "GET"));
  }

  async markDoneBatch(requests: readonly MarkDoneRequest[]): Promise<ClaimReply[]> {
    if (requests.length === 0) return [];
    if (this.scriptBatches && this.opts.markCommand === "script") {
      const parts = await Promise.all(
        chunks(requests, this.opts.maxScriptKeys).map(async (part) => {
          const first = part[0]!;
          if (!part.every((r) => r.ttlMs === first.ttlMs)) return Promise.all(part.map((r) => this.markDone(r.key, r.value, r.ttlMs).catch((e: unknown) => e as Error)));
          const args: Array<string | number> = [];
          for (const r of part) args.push(r.key);
          args.push(Math.ceil(first.ttlMs));
          for (const r of part) args.push(r.value);
          const res = (await this.evalScriptKeys(MARK_DONE_MANY_LUA, part.length, args)) as unknown[];
          return part.map((_, i) => asReply(res[i]));
        }),
      );
      return parts.flat();
    }
    return this.perNode(
      requests,
      (p, r) => p.call("SET", r.key, r.value, "PX", Math.ceil(r.ttlMs), "GET"),
      (r) => this.markDone(r.key, r.value, r.ttlMs),
      true,
    );
  }

  async compareAndDelete(key: string, expected: string): Promise<boolean> {
    return Number(await this.evalScript(COMPARE_AND_DELETE_LUA, key, expected)) === 1;
  }

  private evalScript(s: Script, key: string, ...args: Array<string | number>): Promise<unknown> {
    return this.evalScriptKeys(s, 1, [key, ...args]);
  }

  private async evalScriptKeys(s: Script, numKeys: number, keysAndArgs: Array<string | number>): Promise<unknown> {
    try {
      return await this.send("EVALSHA", s.sha, numKeys, ...keysAndArgs);
    } catch (e) {
      if (!isNoScript(e)) throw e;
      return this.send("EVAL", s.source, numKeys, ...keysAndArgs);
    }
  }

  /**
   * Sends a script call. On a Cluster it goes through a one-command pipeline: ioredis' cluster
   * auto-pipelining picks the slot from the command's first argument, which for EVALSHA is the SHA,
   * not the key — concurrent scripts on different nodes then fail with "All keys in the pipeline
   * should belong to the same slots allocation group". An explicit pipeline routes by the real key.
   */
  private async send(command: "EVALSHA" | "EVAL" | "SET", ...args: Array<string | number>): Promise<unknown> {
    if (!this.client.isCluster) return this.client.call(command, ...args);
    const p = this.client.pipeline();
    p.call(command, ...args);
    const out = await p.exec();
    const [err, value] = out?.[0] ?? [new Error("RedisRepository: pipeline aborted (connection lost)"), null];
    if (err) throw err;
    return value;
  }

  /** Request indices grouped by the node that serves their slot (one group when not a Cluster); null if a slot's node is unknown. */
  private groupByNode(requests: readonly { key: string }[]): number[][] | null {
    const all = requests.map((_, i) => i);
    if (!this.client.isCluster) return [all];
    const slots = this.client.slots;
    if (!slots) return null;
    const groups = new Map<string, number[]>();
    for (const i of all) {
      const node = slots[clusterSlot(requests[i]!.key)]?.[0];
      if (node === undefined) return null;
      const g = groups.get(node);
      if (g) g.push(i);
      else groups.set(node, [i]);
    }
    return [...groups.values()];
  }
}
