/**
 * The Redis integration suite of the dedup repository (the store-neutral contract of
 * `repository.suite.ts` plus what needs Redis: scripts by SHA, pipelines, two connections), parameterised by a client factory so that
 * it runs against a standalone server (`redis-repository.integration.test.ts`) and a Redis Cluster
 * (call `redisRepositorySuite("cluster", () => new Cluster([...]))` from a cluster test).
 * Every test uses a random service prefix and deletes its keys (one DEL per key: cluster-safe).
 */
import type { Cluster, Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { deduplicator } from "../deduplicator/deduplicator";
import type { DeduplicatorOptions } from "../deduplicator/deduplicator-options";
import { InProgressError } from "../errors";
import { newMessage, type Handler, type Message } from "../message";
import { METRIC_NAMES, REASON_POISONED_KEY } from "../../../names/dedup";
import { MemoryPubSub } from "../pubsub";
import { leaseRaceTests } from "../deduplicator/lease-race.suite";
import { RedisRepository } from "./redis-repository";
import { repositoryContractSuite } from "./repository.suite";
import { COMPARE_AND_DELETE_LUA, COMPARE_AND_SET_LUA } from "./redis-scripts";
import { DONE_VALUE, PROCESSING_PREFIX } from "./stored-value";

/** What the Deduplicator writes on success without a position: `done#<payload fingerprint>`. */
const DONE_FP = /^done#[A-Za-z0-9_-]{7}$/;
import { Router } from "../router/router";
import { defaultStack } from "../stack";

/** Makes a connected-or-connecting ioredis client (standalone or Cluster). */
export type RedisClientFactory = () => Redis | Cluster;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function redisRepositorySuite(label: string, makeClient: RedisClientFactory): void {
  describe(`RedisRepository on ${label}`, () => {
    let a: Redis | Cluster;
    let b: Redis | Cluster;
    let service: string;
    const used = new Set<string>();
    const key = (uuid: string, handler = "h") => {
      const k = `${service}:dedup:${handler}:${uuid}`;
      used.add(k);
      return k;
    };
    /** Every third key absent, held by our lease (`processing:mine`) and by another's (`processing:other`). */
    const threeStates = async (ids: readonly string[]) => {
      for (const [i, id] of ids.entries()) {
        await a.call("DEL", key(id));
        if (i % 3 === 1) await a.call("SET", key(id), "processing:mine", "PX", 60_000);
        if (i % 3 === 2) await a.call("SET", key(id), "processing:other", "PX", 60_000);
      }
    };

    beforeAll(() => {
      a = makeClient();
      b = makeClient();
    });
    afterAll(async () => {
      await Promise.all([a.quit(), b.quit()]);
    });
    afterEach(async () => {
      for (const k of used) await a.call("DEL", k);
      used.clear();
      service = `t${Math.random().toString(36).slice(2, 10)}`;
    });
    service = `t${Math.random().toString(36).slice(2, 10)}`;

    function harness(
      client: Redis | Cluster,
      handler: Handler,
      dedup: Partial<DeduplicatorOptions> = {},
      stack: "default" | "dedup-only" = "default",
    ) {
      const registry = new Registry();
      const ps = new MemoryPubSub({ nackResendDelayMs: 0 });
      const router = new Router({ onError: () => undefined });
      const opts: DeduplicatorOptions = { repository: new RedisRepository(client), service, registry, ...dedup };
      router.addHandler({
        name: "h",
        topic: "in",
        subscriber: ps,
        handler,
        middleware:
          stack === "dedup-only"
            ? [deduplicator(opts)]
            : defaultStack({
                dlqPublisher: ps,
                dlqTopic: "in.dlq",
                dedup: opts,
                retry: { initialIntervalMs: 10, maxIntervalMs: 50, randomizationFactor: 0 },
              }),
      });
      return { sink: router.sink("h"), ps, registry };
    }

    repositoryContractSuite(label, () => ({
      repo: new RedisRepository(a),
      key,
      inspect: async (k) => {
        const [value, pttl] = [await a.call("GET", k), Number(await a.call("PTTL", k))];
        return { value: value === null ? null : String(value), pttlMs: pttl < 0 ? null : pttl };
      },
      elapse: async (ms) => void (await sleep(ms)),
    }));

    it("spec: a repeated delivery is swallowed, and after the TTL (1 s) it runs again", async () => {
      const runs: string[] = [];
      const { sink } = harness(a, async (m) => void runs.push(m.uuid), { ttlMs: 1000, leaseMs: 1000 }, "dedup-only");
      expect(await sink.deliver(newMessage("01SPEC2", ""))).toBe("ack");
      key("01SPEC2");
      expect(await sink.deliver(newMessage("01SPEC2", ""))).toBe("ack");
      expect(runs).toEqual(["01SPEC2"]);
      await sleep(1100);
      expect(await sink.deliver(newMessage("01SPEC2", ""))).toBe("ack");
      expect(runs).toEqual(["01SPEC2", "01SPEC2"]);
    });

    it("lease: processing:<token> for leaseMs while running, then done for ttlMs", async () => {
      let during: [unknown, number] | undefined;
      const k = key("L1");
      const { sink } = harness(
        a,
        async () => {
          during = [await a.call("GET", k), Number(await a.call("PTTL", k))];
        },
        { leaseMs: 5_000, ttlMs: 60_000 },
      );
      expect(await sink.deliver(newMessage("L1", ""))).toBe("ack");
      expect(String(during?.[0])).toMatch(new RegExp(`^${PROCESSING_PREFIX}`));
      expect(during?.[1]).toBeGreaterThan(4_000);
      expect(during?.[1]).toBeLessThanOrEqual(5_000);
      expect(String(await a.call("GET", k))).toMatch(DONE_FP);
      expect(Number(await a.call("PTTL", k))).toBeGreaterThan(55_000);
    });

    it("handler fails twice then succeeds → three calls, one success, ack", async () => {
      let calls = 0;
      const { sink, registry } = harness(a, async () => {
        if (++calls <= 2) throw new Error("transient");
      });
      key("R1");
      expect(await sink.deliver(newMessage("R1", ""))).toBe("ack");
      expect(calls).toBe(3);
      expect(String(await a.call("GET", key("R1")))).toMatch(DONE_FP);
      const processed = await registry.getSingleMetric(METRIC_NAMES.processed)!.get();
      expect(processed.values.filter((v) => v.value > 0).map((v) => [v.labels.result, v.value])).toEqual([
        ["success", 1],
      ]);
    });

    it("always fails → DLQ entry with reason_poisoned and the key is released", async () => {
      const { sink, ps } = harness(a, async () => {
        throw new Error("db down");
      });
      expect(await sink.deliver(newMessage("P1", ""))).toBe("ack");
      expect(ps.messages("in.dlq").map((m) => m.metadata[REASON_POISONED_KEY])).toEqual(["db down"]);
      expect(Number(await a.call("EXISTS", key("P1")))).toBe(0);
    });

    it('"naive" marking in the same scenario acks without a success (the documented loss)', async () => {
      let calls = 0;
      let successes = 0;
      const { sink, ps } = harness(
        a,
        async () => {
          if (++calls === 1) throw new Error("transient");
          successes++;
        },
        { marking: "naive" },
      );
      expect(await sink.deliver(newMessage("N1", ""))).toBe("ack");
      key("N1");
      expect([calls, successes, ps.messages("in.dlq").length]).toEqual([1, 0, 0]);
    });

    it("two repositories on one Redis claim one key concurrently → exactly one run; the other gets InProgressError, then is swallowed", async () => {
      let runs = 0;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const ownerDedup = deduplicator({ repository: new RedisRepository(a), service });
      const otherDedup = deduplicator({ repository: new RedisRepository(b), service });
      const mk = () => {
        const m = newMessage("C1", "");
        m.context.handler = "h";
        return m;
      };
      key("C1");
      // Both start at once on two connections: either may win the claim. The winner runs (held at
      // the gate); the loser must get InProgressError, not a run and not a swallow.
      const handler = async () => {
        runs++;
        await gate;
      };
      const sides = [ownerDedup(handler), otherDedup(handler)] as const;
      const results = sides.map((h, i) =>
        h(mk()).then(
          () => i,
          (e: unknown) => e,
        ),
      );
      const first = await Promise.race(results);
      expect(first).toBeInstanceOf(InProgressError);
      release();
      const winner = (await Promise.all(results)).find((r) => typeof r === "number") as number;
      const loser = sides[1 - winner]!;
      // Redelivered after the owner's success: swallowed, the handler does not run again.
      await expect(loser(mk())).resolves.toBeUndefined();
      expect(runs).toBe(1);
    });

    it("an owner that crashed (claimed, never finished) → the message is processed after leaseMs", async () => {
      const k = key("X1");
      await a.call("SET", k, `${PROCESSING_PREFIX}crashed`, "PX", 1500);
      const runs: string[] = [];
      const { sink } = harness(b, async (m) => void runs.push(m.uuid), { leaseMs: 1500 }, "dedup-only");
      expect(await sink.deliver(newMessage("X1", ""))).toBe("nack");
      await sleep(1600);
      expect(await sink.deliver(newMessage("X1", ""))).toBe("ack");
      expect(runs).toEqual(["X1"]);
      expect(String(await a.call("GET", k))).toMatch(DONE_FP);
    });

    it("batch claims: mixed new/done/processing keys in one pipeline give the same outcomes as one-by-one claims", async () => {
      const repo = new RedisRepository(a);
      const ids = Array.from({ length: 30 }, (_, i) => `B${i}`);
      const seed = async () => {
        for (const [i, id] of ids.entries()) {
          const k = key(id);
          await a.call("DEL", k);
          if (i % 3 === 1) await a.call("SET", k, DONE_VALUE, "PX", 60_000);
          if (i % 3 === 2) await a.call("SET", k, `${PROCESSING_PREFIX}other`, "PX", 60_000);
        }
      };
      for (const batchCommand of ["script", "pipeline"] as const) {
        const batchRepo = new RedisRepository(a, { batchCommand, maxScriptKeys: 7 });
        await seed();
        const batch = await batchRepo.claimBatch(
          ids.map((id) => ({ key: key(id), value: "processing:mine", ttlMs: 60_000 })),
        );
        await seed();
        const single = [];
        for (const id of ids) single.push(await repo.claim(key(id), "processing:mine", 60_000));
        expect(batch).toEqual(single);
        expect(batch.filter((r) => r === null)).toHaveLength(10);
        expect(batch.filter((r) => r === DONE_VALUE)).toHaveLength(10);
        // compare-and-set in one call: only the keys we claimed become done.
        const marks = await batchRepo.compareAndSetBatch(
          ids.map((id) => ({ key: key(id), expected: "processing:mine", value: DONE_VALUE, ttlMs: 60_000 })),
        );
        expect(marks).toEqual(ids.map((_, i) => i % 3 === 0));
        expect(await a.call("GET", key(ids[2]!))).toBe(`${PROCESSING_PREFIX}other`);
        expect(await a.call("GET", key(ids[3]!))).toBe(DONE_VALUE);
      }

      // Through the Router's batch entry point: outcomes equal one-by-one delivery.
      await seed();
      const ranBatch: string[] = [];
      const hb = harness(a, async (m: Message) => void ranBatch.push(m.uuid), {}, "dedup-only");
      const outBatch = await hb.sink.deliverBatch(ids.slice(0, 2).map((u) => newMessage(u, "")));
      await seed();
      const ranSingle: string[] = [];
      const hs = harness(a, async (m: Message) => void ranSingle.push(m.uuid), {}, "dedup-only");
      const outSingle = [
        await hs.sink.deliver(newMessage(ids[0]!, "")),
        await hs.sink.deliver(newMessage(ids[1]!, "")),
      ];
      expect(outBatch).toEqual(outSingle);
      expect(ranBatch).toEqual(ranSingle);
    });

    it("batches with one value per key (not a shared batch token) give per-key replies too", async () => {
      const repo = new RedisRepository(a, { maxScriptKeys: 4 });
      const ids = Array.from({ length: 10 }, (_, i) => `V${i}`);
      await a.call("SET", key(ids[2]!), DONE_VALUE, "PX", 60_000);
      const claims = await repo.claimBatch(
        ids.map((id, i) => ({ key: key(id), value: `processing:t${i}`, ttlMs: 30_000 + i })),
      );
      expect(claims).toEqual(ids.map((_, i) => (i === 2 ? DONE_VALUE : null)));
      expect(await a.call("GET", key(ids[7]!))).toBe("processing:t7");
      const marks = await repo.compareAndSetBatch(
        ids.map((id, i) => ({
          key: key(id),
          expected: `processing:t${i === 5 ? "x" : i}`,
          value: DONE_VALUE,
          ttlMs: 60_000,
        })),
      );
      expect(marks).toEqual(ids.map((_, i) => i !== 2 && i !== 5));
      expect(await a.call("GET", key(ids[5]!))).toBe("processing:t5");
    });

    it("done marks (markDone / markDoneBatch, script and pipeline) write unconditionally and return each key's previous value", async () => {
      const ids = Array.from({ length: 9 }, (_, i) => `M${i}`);
      for (const markCommand of ["script", "pipeline"] as const) {
        const repo = new RedisRepository(a, { markCommand, maxScriptKeys: 4 });
        await threeStates(ids);
        const prev = await repo.markDoneBatch(
          ids.map((id, i) => ({ key: key(id), value: `done:in:0:${i}`, ttlMs: 50_000 })),
        );
        expect(prev).toEqual(ids.map((_, i) => [null, "processing:mine", "processing:other"][i % 3]));
        for (const [i, id] of ids.entries()) {
          expect(await a.call("GET", key(id))).toBe(`done:in:0:${i}`);
          const ttl = Number(await a.call("PTTL", key(id)));
          expect(ttl).toBeGreaterThan(45_000);
          expect(ttl).toBeLessThanOrEqual(50_000);
        }
        expect(await repo.markDone(key(ids[0]!), DONE_VALUE, 1_000)).toBe("done:in:0:0");
        expect(await a.call("GET", key(ids[0]!))).toBe(DONE_VALUE);
      }
    });

    it("done marks that name our lease token (`ours`) answer null where the key held it and still return anyone else's value", async () => {
      const ids = Array.from({ length: 9 }, (_, i) => `O${i}`);
      const batchScript = !(a as { isCluster?: boolean }).isCluster;
      for (const markCommand of ["script", "pipeline"] as const) {
        const repo = new RedisRepository(a, { markCommand, maxScriptKeys: 4 });
        await threeStates(ids);
        const prev = await repo.markDoneBatch(
          ids.map((id, i) => ({ key: key(id), value: `done:in:0:${i}`, ttlMs: 50_000, ours: "processing:mine" })),
        );
        for (const [i, p] of prev.entries()) {
          if (i % 3 === 0) expect(p).toBeNull();
          if (i % 3 === 2) expect(p).toBe("processing:other");
          // The batch script leaves our own lease out of its reply; a pipeline of SET … GET returns it.
          if (i % 3 === 1) expect(p).toBe(markCommand === "script" && batchScript ? null : "processing:mine");
        }
        for (const [i, id] of ids.entries()) expect(await a.call("GET", key(id))).toBe(`done:in:0:${i}`);
      }
    });

    // The race of a slow first owner and a failing second owner, on this store (two connections).
    leaseRaceTests({
      repository: (c) => new RedisRepository(c === "first" ? a : b),
      get: async (k) => {
        const v = await a.call("GET", k);
        return v === null ? null : String(v);
      },
      service: () => service,
      used: (k) => void used.add(k),
    });

    it("scripts are called by SHA (loaded once on first use)", async () => {
      const repo = new RedisRepository(a);
      const k = key("SHA1");
      await repo.claim(k, "v", 5_000);
      await repo.compareAndSet(k, "v", "w", 5_000);
      await repo.compareAndDelete(k, "w");
      const evalsha = await a.call("EVALSHA", COMPARE_AND_DELETE_LUA.sha, 1, k, "nothing");
      expect(Number(evalsha)).toBe(0);
      expect(Number(await a.call("EVALSHA", COMPARE_AND_SET_LUA.sha, 1, k, "x", "y", 1000))).toBe(0);
    });
  });
}
