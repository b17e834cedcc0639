import { createHash } from "node:crypto";
import { clusterSlot } from "./cluster-slot";
import type { ClaimReply, ClaimRequest, DedupRepository } from "./repository";

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
   * How a claim is sent: `"set-nx-get"` = `SET key value NX PX ttl GET` (one command, Redis ≥ 7.0);
   * `"lua"` = a one-key script with the same result, for Redis 6.2.
   * @default "set-nx-get"
   */
  claimCommand?: "set-nx-get" | "lua";
}

/** Defaults of {@link RedisRepositoryOptions}. */
export const DEFAULT_REDIS_REPOSITORY_OPTIONS = {
  claimCommand: "set-nx-get",
} as const satisfies Required<RedisRepositoryOptions>;

/** A Lua script and its SHA1, computed once. */
interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
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
 * Redis Cluster: every command and script touches ONE key (no CROSSSLOT), scripts are called by
 * SHA (`EVALSHA`) and fall back to `EVAL` on `NOSCRIPT`, which also loads them on that node — so
 * each node loads each script once, on first use. Batches are one pipeline (on a Cluster, one per
 * node, sent in parallel).
 */
export class RedisRepository implements DedupRepository {
  readonly kind = "redis" as const;
  private readonly opts: Required<RedisRepositoryOptions>;

  constructor(
    private readonly client: DedupRedisClient,
    options: RedisRepositoryOptions = {},
  ) {
    this.opts = { ...DEFAULT_REDIS_REPOSITORY_OPTIONS, ...options };
    if (!["set-nx-get", "lua"].includes(this.opts.claimCommand)) throw new RangeError('RedisRepository: claimCommand must be "set-nx-get" or "lua"');
    if (!client || typeof client.call !== "function") throw new RangeError("RedisRepository: client must be an ioredis Redis or Cluster (or implement DedupRedisClient)");
  }

  async claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    if (this.opts.claimCommand === "lua") return asReply(await this.evalScript(CLAIM_LUA, key, value, Math.ceil(ttlMs)));
    return asReply(await this.client.call("SET", key, value, "PX", Math.ceil(ttlMs), "NX", "GET"));
  }

  async claimBatch(requests: readonly ClaimRequest[]): Promise<ClaimReply[]> {
    if (requests.length === 0) return [];
    const groups = this.groupByNode(requests);
    const out: ClaimReply[] = new Array<ClaimReply>(requests.length);
    await Promise.all(
      groups.map(async (idx) => {
        const p = this.client.pipeline();
        for (const i of idx) {
          const r = requests[i]!;
          if (this.opts.claimCommand === "lua") p.call("EVALSHA", CLAIM_LUA.sha, 1, r.key, r.value, Math.ceil(r.ttlMs));
          else p.call("SET", r.key, r.value, "PX", Math.ceil(r.ttlMs), "NX", "GET");
        }
        const res = await p.exec();
        if (!res) throw new Error("RedisRepository.claimBatch: pipeline aborted (connection lost)");
        await Promise.all(
          idx.map(async (reqIndex, j) => {
            const [err, v] = res[j] ?? [new Error("missing pipeline reply"), null];
            if (err && isNoScript(err)) {
              const r = requests[reqIndex]!;
              out[reqIndex] = await this.claim(r.key, r.value, r.ttlMs).catch((e: unknown) => e as Error);
            } else out[reqIndex] = err ?? asReply(v);
          }),
        );
      }),
    );
    return out;
  }

  async compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    return Number(await this.evalScript(COMPARE_AND_SET_LUA, key, expected, value, Math.ceil(ttlMs))) === 1;
  }

  async compareAndDelete(key: string, expected: string): Promise<boolean> {
    return Number(await this.evalScript(COMPARE_AND_DELETE_LUA, key, expected)) === 1;
  }

  private async evalScript(s: Script, key: string, ...args: Array<string | number>): Promise<unknown> {
    try {
      return await this.client.call("EVALSHA", s.sha, 1, key, ...args);
    } catch (e) {
      if (!isNoScript(e)) throw e;
      return this.client.call("EVAL", s.source, 1, key, ...args);
    }
  }

  /** Request indices grouped by the node that serves their slot (one group when not a Cluster). */
  private groupByNode(requests: readonly ClaimRequest[]): number[][] {
    const all = requests.map((_, i) => i);
    if (!this.client.isCluster || !this.client.slots) return [all];
    const slots = this.client.slots;
    const groups = new Map<string, number[]>();
    for (const i of all) {
      const node = slots[clusterSlot(requests[i]!.key)]?.[0] ?? "?";
      const g = groups.get(node);
      if (g) g.push(i);
      else groups.set(node, [i]);
    }
    return [...groups.values()];
  }
}
