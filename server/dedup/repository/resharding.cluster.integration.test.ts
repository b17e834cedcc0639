/**
 * A live resharding of the REAL Redis Cluster while two replicas claim: 20,000 messages
 * split over two partitions (one per replica), every one re-read a little later by the OTHER
 * replica (a rebalance), 5% published again (a forwarder re-publish), ~3% failing their first
 * attempt — run through the library's Router + defaultStack (Retry, PoisonQueue, Deduplicator with
 * lease marking and batch pre-claims) over the in-memory pub/sub, while `redis-cli --cluster
 * reshard` moves 1,200 slots away from one master and back. The side-effect recorder counts handler
 * successes per message id: 0 lost and 0 duplicate side effects; the masters' `INFO errorstats`
 * show the MOVED / ASK redirections the clients went through.
 *
 * Runs twice: with the library's recommended client options, and with auto-pipelining off, where
 * ioredis refuses whole batch pipelines while its slot map changes and the Deduplicator counts each
 * refused batch as a store error (a false "Redis outage" alert) — that assertion fails until fixed.
 *
 * The layout is restored (the same slots moved back) so other tests see the normal cluster; do not
 * run another resharding against the same cluster at the same time.
 * Needs `npm run stack:cluster`; without it the tests fail with that instruction.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Cluster, type ClusterOptions } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newMessage, type Message } from "../message";
import { METRIC_NAMES } from "../../../names/dedup";
import { MemoryPubSub } from "../pubsub";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository, type DedupRedisClient } from "./redis-repository";
import { Router } from "../router/router";
import { defaultStack } from "../stack";
import {
  clusterMasters,
  connectCluster,
  deletePrefix,
  errorStats,
  type MasterInfo,
} from "@/server/testing/redis-cluster";
import { registryTotal } from "@/server/testing/counter-total";

const MESSAGES = 20_000;
const CHUNK = 500;
/** Slots moved by each reshard (of 5461 per master): enough keys migrate to take a few seconds. */
const RESHARD_SLOTS = 1200;
const RESHARD_TIMEOUT_MS = 90_000;

/**
 * Client options of the replicas. First what the library recommends (auto-pipelining on, one retry
 * per request); then auto-pipelining off, a legitimate choice that takes a different path through
 * ioredis' redirection handling.
 */
const REPLICA_CONFIGS: ReadonlyArray<{ name: string; options: ClusterOptions }> = [
  {
    name: "RECOMMENDED_IOREDIS_OPTIONS",
    options: {
      enableAutoPipelining: RECOMMENDED_IOREDIS_OPTIONS.enableAutoPipelining,
      redisOptions: {
        maxRetriesPerRequest: RECOMMENDED_IOREDIS_OPTIONS.maxRetriesPerRequest,
        connectTimeout: RECOMMENDED_IOREDIS_OPTIONS.connectTimeout,
      },
    },
  },
  {
    name: "auto-pipelining off",
    options: { enableAutoPipelining: false, redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000 } },
  },
];

/** Runs one bounded `redis-cli --cluster reshard` (killed by pid after RESHARD_TIMEOUT_MS). */
function reshard(
  entry: string,
  from: string,
  to: string,
  slots: number,
): Promise<{ code: number | null; ms: number; tail: string }> {
  const t0 = Date.now();
  const child = spawn(
    "redis-cli",
    [
      "--cluster",
      "reshard",
      entry,
      "--cluster-from",
      from,
      "--cluster-to",
      to,
      "--cluster-slots",
      String(slots),
      "--cluster-yes",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  child.stderr.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  const timer = setTimeout(() => {
    if (child.pid && child.exitCode === null) process.kill(child.pid, "SIGKILL");
  }, RESHARD_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, ms: Date.now() - t0, tail: out.slice(-600) });
    });
  });
}

/** Counts, per batch pipeline reply, the claims that came back as MOVED / ASK (re-claimed one by one by the Deduplicator). */
function watching(c: Cluster, redirected: { n: number }, failures: Map<string, number>): DedupRedisClient {
  return {
    isCluster: true,
    get slots() {
      return c.slots;
    },
    call: (command, ...args) =>
      c.call(command, ...args).catch((e: Error) => {
        const k = `${command}: ${e.message.replace(/[0-9a-f]{40}|\d+/g, "#")}`;
        failures.set(k, (failures.get(k) ?? 0) + 1);
        throw e;
      }),
    pipeline() {
      const p = c.pipeline();
      return {
        call: (command: string, ...args: Array<string | number>) => p.call(command, ...args),
        exec: async () => {
          const res = await p.exec().catch((e: Error) => {
            const k = `pipeline: ${e.message.replace(/\d+/g, "#")}`;
            failures.set(k, (failures.get(k) ?? 0) + 1);
            throw e;
          });
          for (const [e] of res ?? []) if (e && /^(MOVED|ASK) /.test(e.message)) redirected.n++;
          return res;
        },
      };
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let admin: Cluster | undefined;
let clusterError: Error | null = null;
let layoutBefore: MasterInfo[] = [];

beforeAll(async () => {
  try {
    admin = await connectCluster();
    layoutBefore = await clusterMasters(admin);
  } catch (e) {
    clusterError = e as Error;
  }
});
afterAll(() => admin?.disconnect());

interface RunResult {
  runMs: number;
  out: { code: number | null; ms: number; tail: string };
  back: { code: number | null; ms: number; tail: string };
  movedAsk: number;
  redirectedBatchClaims: number;
  lost: string[];
  duplicated: Array<[string, number]>;
  effects: number;
  republished: number;
  deduplicated: number;
  storeErrors: number;
  leaseLost: number;
  failedFirstAttempts: number;
  dlq: string[];
  failures: Record<string, number>;
  layoutAfter: MasterInfo[];
  stateAfter: string;
}

/** The whole run: two replicas claim while slots move out and back; returns what the assertions read. */
async function runDuringResharding(c: Cluster, options: ClusterOptions): Promise<RunResult> {
  const service = `rs${randomBytes(4).toString("hex")}`;
  const prefix = `${service}:dedup:h`;
  const [source, target] = layoutBefore;
  if (!source || !target || !layoutBefore.every((m) => m.slots > RESHARD_SLOTS)) {
    throw new Error(`expected 3 masters with > ${RESHARD_SLOTS} slots each, found ${JSON.stringify(layoutBefore)}`);
  }
  const registry = new Registry();
  const pubsub = new MemoryPubSub({ batchSize: 50, nackResendDelayMs: 5, persistent: false });
  const effects = new Map<string, number>();
  const failedOnce = new Set<string>();
  let allDoneAt = 0;
  const redirected = { n: 0 };
  const failures = new Map<string, number>();
  const replicas = await Promise.all([connectCluster(options), connectCluster(options)]);
  // Two replicas of one consumer group: replica i consumes partition `orders.p<i>`.
  const routers = replicas.map((client, i) => {
    const router = new Router({ onError: () => undefined, closeTimeoutMs: 5_000 });
    router.addHandler({
      name: "h",
      topic: `orders.p${i}`,
      subscriber: pubsub,
      middleware: defaultStack({
        dlqPublisher: pubsub,
        dlqTopic: "orders.dlq",
        retry: { maxRetries: 20, initialIntervalMs: 2, maxIntervalMs: 50 },
        dedup: {
          repository: new RedisRepository(watching(client, redirected, failures)),
          service,
          registry,
          leaseMs: 30_000,
          ttlMs: 600_000,
          timeoutMs: 2_000,
        },
      }),
      // The side effect: recorded only when the handler succeeds; ~3% fail their first attempt.
      handler: async (m: Message) => {
        if (m.uuid.endsWith("7") && m.uuid.length % 2 === 0 && !failedOnce.has(m.uuid)) {
          failedOnce.add(m.uuid);
          throw new Error("transient downstream failure");
        }
        effects.set(m.uuid, (effects.get(m.uuid) ?? 0) + 1);
        if (effects.size === MESSAGES && allDoneAt === 0) allDoneAt = Date.now();
      },
    });
    return router;
  });
  const dlq: Message[] = [];
  const dlqRouter = new Router({ onError: () => undefined });
  dlqRouter.addHandler({
    name: "dlq",
    topic: "orders.dlq",
    subscriber: pubsub,
    handler: async (m) => void dlq.push(m),
  });
  const all = [...routers, dlqRouter];
  const runs = all.map((r) => r.run());
  await Promise.all(all.map((r) => r.running));

  const ids = Array.from({ length: MESSAGES }, (_, i) => `m${i}-${randomBytes(3).toString("hex")}`);
  const before = await errorStats(c);
  type Moves = { out: Awaited<ReturnType<typeof reshard>>; back: Awaited<ReturnType<typeof reshard>> };
  let moves: Promise<Moves> | null = null;
  let reshardRunning = false;
  let republished = 0;
  const t0 = Date.now();
  try {
    const partitionOf = (id: string) => `orders.p${Number(id.slice(1, id.indexOf("-"))) % 2}`;
    const otherPartition = (id: string) => `orders.p${(Number(id.slice(1, id.indexOf("-"))) + 1) % 2}`;
    // Every copy of a message carries its payload: a re-read or a re-publish is the same message
    // (another payload under a done UUID is a payload conflict, sent to the DLQ).
    const publishTo = async (topicOf: (id: string) => string, list: readonly string[]) => {
      for (const topic of ["orders.p0", "orders.p1"]) {
        const mine = list.filter((id) => topicOf(id) === topic);
        if (mine.length) await pubsub.publish(topic, ...mine.map((id) => newMessage(id, `order ${id}`)));
      }
    };
    for (let i = 0; i < MESSAGES + 2 * CHUNK; i += CHUNK) {
      if (i < MESSAGES) await publishTo(partitionOf, ids.slice(i, i + CHUNK));
      // A rebalance: the OTHER replica re-reads the chunk before the previous one (every id once more).
      if (i >= 2 * CHUNK) await publishTo(otherPartition, ids.slice(i - 2 * CHUNK, i - CHUNK));
      // A forwarder re-publishes 5% of the previous chunk (same ids, same partition).
      if (i >= CHUNK && i <= MESSAGES) {
        const again = ids.slice(i - CHUNK, i).filter((_, j) => j % 20 === 0);
        republished += again.length;
        await publishTo(partitionOf, again);
      }
      if (i === 4 * CHUNK) {
        reshardRunning = true;
        moves = (async () => {
          const out = await reshard(source.addr, source.id, target.id, RESHARD_SLOTS);
          const back = await reshard(source.addr, target.id, source.id, RESHARD_SLOTS);
          reshardRunning = false;
          return { out, back };
        })();
      }
      // Pace the run so that the claims overlap the slot migrations.
      await sleep(reshardRunning ? 300 : 10);
    }
    const publishedMs = Date.now() - t0;
    await pubsub.idle();
    const runMs = Date.now() - t0;
    console.info(
      `[resharding timing] published in ${publishedMs} ms, last side effect at ${allDoneAt - t0} ms, idle at ${runMs} ms, in-progress nacks ${await registryTotal(registry, METRIC_NAMES.inProgress)}`,
    );
    const { out, back } = await moves!;
    const after = await errorStats(c);
    return {
      runMs,
      out,
      back,
      movedAsk: (after.MOVED ?? 0) - (before.MOVED ?? 0) + (after.ASK ?? 0) - (before.ASK ?? 0),
      redirectedBatchClaims: redirected.n,
      lost: ids.filter((id) => !effects.has(id)),
      duplicated: [...effects].filter(([, n]) => n > 1),
      effects: effects.size,
      republished,
      deduplicated: await registryTotal(registry, METRIC_NAMES.processed, { result: "deduplicated" }),
      storeErrors: await registryTotal(registry, METRIC_NAMES.errors),
      leaseLost: await registryTotal(registry, METRIC_NAMES.leaseLost),
      failedFirstAttempts: failedOnce.size,
      dlq: dlq.map((m) => m.uuid),
      failures: Object.fromEntries(failures),
      layoutAfter: [],
      stateAfter: "",
    };
  } finally {
    await Promise.all(all.map((r) => r.close()));
    await pubsub.close();
    await Promise.allSettled(runs);
    if (moves) await (moves as Promise<unknown>).catch(() => undefined);
    replicas.forEach((r) => r.disconnect());
    // Restore the layout if the move back did not complete.
    const now = await clusterMasters(c);
    const src = now.find((m) => m.id === source.id);
    if (src && src.slots < source.slots) await reshard(source.addr, target.id, source.id, source.slots - src.slots);
    await deletePrefix(c, prefix);
  }
}

describe.each(REPLICA_CONFIGS)(
  "resharding the Redis Cluster while two replicas claim 20,000 messages (Router + in-memory pub/sub, $name)",
  ({ name, options }) => {
    let r: RunResult;
    beforeAll(async () => {
      if (clusterError) return;
      r = await runDuringResharding(admin!, options);
      r.layoutAfter = await clusterMasters(admin!);
      r.stateAfter = String(await admin!.cluster("INFO"));
      console.info(
        `[resharding ${name}] ${MESSAGES} messages, each re-read by the other replica, + ${r.republished} re-published in ${r.runMs} ms; ` +
          `${RESHARD_SLOTS} slots out in ${r.out.ms} ms and back in ${r.back.ms} ms; MOVED+ASK replies ${r.movedAsk}; ` +
          `batch claims answered MOVED/ASK ${r.redirectedBatchClaims}; swallowed ${r.deduplicated}; dedup store errors ${r.storeErrors}; ` +
          `lost ${r.lost.length}; duplicate side effects ${r.duplicated.length}; first attempts failed ${r.failedFirstAttempts}; ` +
          `failed store calls ${JSON.stringify(r.failures)}`,
      );
    }, 240_000);
    beforeEach(() => {
      if (clusterError) throw clusterError;
    });

    it("both reshards (out and back) completed while messages were being claimed", () => {
      expect(r.out.code, `reshard out: ${r.out.tail}`).toBe(0);
      expect(r.back.code, `reshard back: ${r.back.tail}`).toBe(0);
      expect(r.runMs, "the run outlasted the first slot move").toBeGreaterThan(r.out.ms);
    });

    it("loses nothing: every message had its side effect, none went to the DLQ", () => {
      expect(r.lost.slice(0, 5), `${r.lost.length} messages never had their side effect`).toEqual([]);
      expect(r.effects).toBe(MESSAGES);
      expect(r.dlq).toEqual([]);
      expect(r.failedFirstAttempts, "release on failure was exercised").toBeGreaterThan(50);
    });

    it("runs no side effect twice: every repeat (the other replica's re-read, a re-publish) was swallowed", () => {
      expect(r.duplicated.slice(0, 5), `${r.duplicated.length} messages had their side effect more than once`).toEqual(
        [],
      );
      expect(r.deduplicated).toBeGreaterThanOrEqual(MESSAGES + r.republished);
      expect(r.leaseLost).toBe(0);
    });

    it("the clients went through MOVED/ASK redirections and no single-key call failed", () => {
      expect(r.movedAsk, "MOVED/ASK replies counted by the masters during the run").toBeGreaterThan(0);
      expect(Object.keys(r.failures).filter((k) => !k.startsWith("pipeline:"))).toEqual([]);
    });

    it("a resharding does not count as a Redis failure (deduplication_errors_total stays 0, no false 'Redis outage' alert)", () => {
      // ioredis may refuse a whole per-node batch pipeline while the slot map changes under it
      // ("same slots allocation group"); the repository then claims that group key by key, so the
      // refusal is no store failure and must not feed the Redis-outage alert.
      expect(r.storeErrors).toBe(0);
    });

    it("leaves the cluster as it found it: same slots per master, cluster_state:ok", () => {
      expect(r.layoutAfter.map((m) => [m.addr, m.slots])).toEqual(layoutBefore.map((m) => [m.addr, m.slots]));
      expect(r.stateAfter).toContain("cluster_state:ok");
    });
  },
);
