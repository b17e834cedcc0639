import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { HOUR_MS } from "@/names/keys";
import { scenarioEnv } from "./env";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { FAST_RETRY, ScenarioContext, type ReplicaSetup } from "./scenario-context";

/**
 * Volume: 6,000 messages on real Kafka (6 partitions) through the correct stack on Redis with the
 * PostgreSQL side-effect store, while a second replica joins, a replica crashes after its handler
 * and before its commit, its successor takes over and the second replica leaves again. Offsets are
 * committed on an interval, so every rebalance re-reads a tail. Nothing may be lost and no push may
 * be sent twice; the re-reads must have been swallowed by the Deduplicator.
 */
const N = Number(process.env.VOLUME_N ?? 6000);
const service = `voltest${randomBytes(3).toString("hex")}`;
const redis = createDedupRedis({ url: "redis://127.0.0.1:6379" });
const env = scenarioEnv({
  kafkaBrokers: ["127.0.0.1:9092"],
  redis,
  databaseUrl: "postgres://postgres@127.0.0.1:5432/test",
  service,
  partitions: 6,
});

afterAll(async () => {
  await deleteKeysByPrefix(redis, `${service}:dedup`);
  await env.close();
  redis.disconnect();
});

describe("rebalance and restart-before-commit under volume (Kafka, Redis, PostgreSQL)", () => {
  it(`${N} messages, two replicas, a crash before commit: 0 lost, 0 duplicate side effects`, async () => {
    const abort = new AbortController();
    const ctx = new ScenarioContext(env, "volume", abort.signal);
    const setup = (extra: Partial<ReplicaSetup> = {}): ReplicaSetup => ({
      stack: { order: "spec", retry: FAST_RETRY, dedup: { ttlMs: HOUR_MS, leaseMs: 15_000, marking: "lease" } },
      behaviour: { idempotent: true },
      subscriber: { commitIntervalMs: 1000, chunkSize: 200 },
      ...extra,
    });
    const log = (what: string) =>
      console.log(`[volume] ${what}: ${JSON.stringify(ctx.probe.summary())} succeeded=${ctx.probe.succeeded.size}`);
    try {
      await ctx.setup();
      await ctx.startReplica("replica-1", setup());
      const publishing = (async () => {
        for (let sent = 0; sent < N; sent += 200) {
          await ctx.publish(Math.min(200, N - sent));
          await ctx.sleep(200);
        }
      })();
      await ctx.until(() => ctx.probe.succeeded.size >= N / 6, 60_000);
      log("replica-2 joins");
      await ctx.startReplica("replica-2", setup());
      log("replica-2 joined");
      await ctx.until(() => ctx.probe.succeeded.size >= N / 3, 60_000);
      let handled = 0;
      const crashing = await ctx.startReplica(
        "replica-crash",
        setup({
          subscriber: {
            commitIntervalMs: 1000,
            chunkSize: 200,
            beforeCommit: (acked) => ((handled += acked.length) >= 50 ? "crash" : "commit"),
          },
        }),
      );
      log("crashing joined");
      await ctx.until(() => crashing.crashed, 60_000);
      log("crashed");
      await crashing.done;
      log("crash done");
      await ctx.startReplica("replica-3", setup());
      await publishing;
      await ctx.until(() => ctx.probe.succeeded.size >= (N * 3) / 4, 60_000);
      log("replica-2 leaves");
      await ctx.replicas[1]!.stop();
      log("replica-2 left");
      expect(await ctx.settle(3000, 90_000)).toBe(true);
      const s = ctx.probe.summary();
      console.log(`[volume] ${JSON.stringify(s)}`);
      expect(s.published).toBe(N);
      expect(s.lost).toBe(0);
      expect(s.duplicateSideEffects).toBe(0);
      expect(s.sideEffects).toBe(N);
      expect(s.dlq).toBe(0);
      expect(crashing.crashed).toBe(true);
      expect(s.deduplicated).toBeGreaterThan(0);
      expect(s.deliveries).toBe(N + s.deduplicated);
    } finally {
      abort.abort();
      await ctx.teardown();
    }
  }, 240_000);
});
