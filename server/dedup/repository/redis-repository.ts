import { RedisCalls } from "./redis-calls";
import {
  CLAIM_LUA,
  CLAIM_MANY_LUA,
  CLAIM_MANY_SAME_LUA,
  COMPARE_AND_DELETE_LUA,
  COMPARE_AND_SET_LUA,
  COMPARE_AND_SET_MANY_LUA,
  COMPARE_AND_SET_MANY_SAME_EXPECTED_LUA,
  COMPARE_AND_SET_MANY_SAME_LUA,
  EXTEND_LEASE_LUA,
  MARK_DONE_MANY_LUA,
  MARK_DONE_MANY_OURS_LUA,
  type Script,
} from "./redis-scripts";
import type { ClaimReply, ClaimRequest, CompareAndSetRequest, DedupRepository, MarkDoneRequest } from "./repository";

import {
  asReply,
  DEFAULT_REDIS_REPOSITORY_OPTIONS,
  watchConnection,
  type ConnectionTimes,
  type DedupRedisClient,
  type RedisRepositoryOptions,
} from "./redis-client";

export {
  DEFAULT_REDIS_REPOSITORY_OPTIONS,
  RECOMMENDED_IOREDIS_OPTIONS,
  type DedupRedisClient,
  type DedupRedisPipeline,
  type RedisRepositoryOptions,
} from "./redis-client";

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
  private readonly calls: RedisCalls;

  constructor(
    private readonly client: DedupRedisClient,
    options: RedisRepositoryOptions = {},
  ) {
    this.opts = { ...DEFAULT_REDIS_REPOSITORY_OPTIONS, ...options };
    if (!["set-nx-get", "lua"].includes(this.opts.claimCommand))
      throw new RangeError('RedisRepository: claimCommand must be "set-nx-get" or "lua"');
    if (!["script", "pipeline"].includes(this.opts.markCommand))
      throw new RangeError('RedisRepository: markCommand must be "script" or "pipeline"');
    if (!["script", "pipeline"].includes(this.opts.batchCommand))
      throw new RangeError('RedisRepository: batchCommand must be "script" or "pipeline"');
    if (!(
      Number.isInteger(this.opts.maxScriptKeys) &&
      this.opts.maxScriptKeys >= 1 &&
      this.opts.maxScriptKeys <= 100_000
    ))
      throw new RangeError("RedisRepository: maxScriptKeys must be an integer in [1, 100000]");
    if (!client || typeof client.call !== "function")
      throw new RangeError(
        "RedisRepository: client must be an ioredis Redis or Cluster (or implement DedupRedisClient)",
      );
    this.watch = watchConnection(client);
    this.calls = new RedisCalls(client, this.opts.maxScriptKeys);
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
    if (this.opts.claimCommand === "lua")
      return asReply(await this.calls.evalScript(CLAIM_LUA, key, value, Math.ceil(ttlMs)));
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
      return this.calls.inScripts(requests, async (part, first, args) => {
        // One value for the whole batch (the Deduplicator's batch token) → 1 argument per key, not 3.
        const same = part.every((r) => r.value === first.value && r.ttlMs === first.ttlMs);
        if (same) args.push(first.value, Math.ceil(first.ttlMs));
        else for (const r of part) args.push(r.value, Math.ceil(r.ttlMs));
        const res = (await this.calls.evalScriptKeys(
          same ? CLAIM_MANY_SAME_LUA : CLAIM_MANY_LUA,
          part.length,
          args,
        )) as unknown[];
        return part.map((_, i) => asReply(res[i]));
      });
    }
    return this.calls.perNode(
      requests,
      (p, r) =>
        this.opts.claimCommand === "lua"
          ? p.call("EVALSHA", CLAIM_LUA.sha, 1, r.key, r.value, Math.ceil(r.ttlMs))
          : p.call("SET", r.key, r.value, "PX", Math.ceil(r.ttlMs), "NX", "GET"),
      (r) => this.claim(r.key, r.value, r.ttlMs),
    );
  }

  async compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    return Number(await this.calls.evalScript(COMPARE_AND_SET_LUA, key, expected, value, Math.ceil(ttlMs))) === 1;
  }

  async compareAndSetBatch(requests: readonly CompareAndSetRequest[]): Promise<boolean[]> {
    if (!this.scriptBatches)
      return Promise.all(requests.map((r) => this.compareAndSet(r.key, r.expected, r.value, r.ttlMs)));
    return this.calls.inScripts(requests, async (part, first, args) => {
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
      const res = (await this.calls.evalScriptKeys(s, part.length, args)) as unknown[];
      return part.map((_, i) => Number(res[i]) === 1);
    });
  }

  /** The unconditional `done` mark: `SET key value PX ttl GET` (Redis ≥ 6.2), resolving the previous value. */
  async markDone(key: string, value: string, ttlMs: number): Promise<string | null> {
    // On a Cluster through a one-command pipeline, like the scripts (`send`): measured in the
    // resharding test, a plain auto-pipelined call could fail with MOVED while slots moved.
    return asReply(await this.calls.send("SET", key, value, "PX", Math.ceil(ttlMs), "GET"));
  }

  async markDoneBatch(requests: readonly MarkDoneRequest[]): Promise<ClaimReply[]> {
    if (requests.length === 0) return [];
    if (this.scriptBatches && this.opts.markCommand === "script") {
      return this.calls.inScripts<MarkDoneRequest, ClaimReply>(requests, async (part, first, args) => {
        if (!part.every((r) => r.ttlMs === first.ttlMs))
          return Promise.all(part.map((r) => this.markDone(r.key, r.value, r.ttlMs).catch((e: unknown) => e as Error)));
        const ours = first.ours !== undefined && part.every((r) => r.ours === first.ours) ? first.ours : undefined;
        args.push(Math.ceil(first.ttlMs));
        if (ours !== undefined) args.push(ours);
        for (const r of part) args.push(r.value);
        const res = (await this.calls.evalScriptKeys(
          ours === undefined ? MARK_DONE_MANY_LUA : MARK_DONE_MANY_OURS_LUA,
          part.length,
          args,
        )) as unknown[];
        if (ours === undefined) return part.map((_, i) => asReply(res[i]));
        // Only the keys whose previous value was someone else's, as (1-based index, value) pairs.
        const out: Array<string | null> = new Array<string | null>(part.length).fill(null);
        for (let j = 0; j + 1 < res.length; j += 2) out[Number(res[j]) - 1] = asReply(res[j + 1]);
        return out;
      });
    }
    return this.calls.perNode(
      requests,
      (p, r) => p.call("SET", r.key, r.value, "PX", Math.ceil(r.ttlMs), "GET"),
      (r) => this.markDone(r.key, r.value, r.ttlMs),
      true,
    );
  }

  /** The heartbeat's renewal: `PEXPIRE` of `key` only while it holds `expected` (one script, one key). */
  async extendLease(key: string, expected: string, ttlMs: number): Promise<boolean> {
    return Number(await this.calls.evalScript(EXTEND_LEASE_LUA, key, expected, Math.ceil(ttlMs))) === 1;
  }

  async compareAndDelete(key: string, expected: string): Promise<boolean> {
    return Number(await this.calls.evalScript(COMPARE_AND_DELETE_LUA, key, expected)) === 1;
  }
}
