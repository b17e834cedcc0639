/**
 * How RedisRepository talks to Redis, standalone or Cluster: one script call by SHA with the `EVAL`
 * fallback, a one-command pipeline on a Cluster (routed by the real key), a batch as one pipeline
 * per node or as multi-key scripts (standalone servers only).
 */
import { clusterSlot } from "./cluster-slot";
import type { Script } from "./redis-scripts";
import type { ClaimReply } from "./repository";
import { asReply, chunks, isNoScript, type DedupRedisClient, type DedupRedisPipeline } from "./redis-client";

/** The calls of one RedisRepository on its client. */
export class RedisCalls {
  constructor(
    private readonly client: DedupRedisClient,
    /** At most this many keys per batch script (`maxScriptKeys`). */
    private readonly maxScriptKeys: number,
  ) {}

  /**
   * One pipeline per node (one in all when not a Cluster), sent in parallel; replies in request
   * order, a failed command an `Error` in its slot. `single` sends one request on its own: when the
   * slots are not known yet, when a Cluster refuses a whole per-node pipeline while its slots move
   * (or, with `resendRefused`, one of its commands), and for a `NOSCRIPT` reply.
   */
  async perNode<R extends { key: string }>(
    requests: readonly R[],
    add: (p: DedupRedisPipeline, r: R) => unknown,
    single: (r: R) => Promise<string | null>,
    resendRefused = false,
  ): Promise<ClaimReply[]> {
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
            out[reqIndex] =
              err && (isNoScript(err) || (resendRefused && this.client.isCluster))
                ? await one(requests[reqIndex]!)
                : (err ?? asReply(v));
          }),
        );
      }),
    );
    return out;
  }

  /**
   * A batch sent as multi-key scripts (standalone servers only): `perScript` runs once per chunk of at
   * most `maxScriptKeys` requests, in parallel, with the chunk's first request and its keys as the
   * first script arguments (it pushes the rest); the replies come back in request order.
   */
  async inScripts<R extends { key: string }, T>(
    requests: readonly R[],
    perScript: (part: readonly R[], first: R, args: Array<string | number>) => Promise<T[]>,
  ): Promise<T[]> {
    const parts = await Promise.all(
      chunks(requests, this.maxScriptKeys).map((part) =>
        perScript(
          part,
          part[0]!,
          part.map((r) => r.key),
        ),
      ),
    );
    return parts.flat();
  }

  evalScript(s: Script, key: string, ...args: Array<string | number>): Promise<unknown> {
    return this.evalScriptKeys(s, 1, [key, ...args]);
  }

  async evalScriptKeys(s: Script, numKeys: number, keysAndArgs: Array<string | number>): Promise<unknown> {
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
  async send(command: "EVALSHA" | "EVAL" | "SET", ...args: Array<string | number>): Promise<unknown> {
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
