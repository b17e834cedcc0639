/**
 * What a handler returns is published before its delivery counts as done, run against any
 * repository (memory: `produced-messages.test.ts`; Redis standalone and Cluster:
 * `produced-messages.integration.test.ts`). Public API only: Router + MemoryPubSub + defaultStack.
 *
 * Both directions are measured: a failed publish never loses an output (at least once), a
 * redelivery after a landed publish never publishes it again — except when the `done` mark itself
 * failed, where the output is published twice (what at-least-once leaves possible).
 */
import { expect, it } from "vitest";
import { newMessage, payloadText, type Message } from "../message";
import { MemoryPubSub } from "../pubsub";
import type { ClaimReply, DedupRepository, MarkDoneRequest } from "../repository/repository";
import { Router } from "../router/router";
import { defaultStack } from "../stack";

/** What the suite needs from a store: a fresh repository and service name per test. */
export interface ProducedStore {
  repository: DedupRepository;
  /** Key prefix isolation: a fresh service name per test. */
  service: string;
}

const IN = "orders";
const OUT = "orders.confirmed";
const DLQ = "orders.dlq";

/**
 * `inner` whose `done` marks fail for the keys `fails` picks (every way a mark is written:
 * markDone, markDoneBatch, compare-and-set to a `done` value): "publish landed, mark did not".
 */
export function failingDoneMarks(inner: DedupRepository, fails: (key: string) => boolean): DedupRepository {
  const boom = () => Object.assign(new Error("connect ECONNREFUSED (injected: done mark)"), { code: "ECONNREFUSED" });
  const isDone = (v: string) => v === "done" || v.startsWith("done:");
  const repo: DedupRepository = {
    kind: inner.kind,
    inProcess: inner.inProcess,
    claim: (k, v, t) => inner.claim(k, v, t),
    claimBatch: (r) => inner.claimBatch(r),
    compareAndSet: (k, e, v, t) => (isDone(v) && fails(k) ? Promise.reject(boom()) : inner.compareAndSet(k, e, v, t)),
    compareAndDelete: (k, e) => inner.compareAndDelete(k, e),
  };
  if (inner.markDone) {
    const mark = inner.markDone.bind(inner);
    repo.markDone = (k, v, t) => (fails(k) ? Promise.reject(boom()) : mark(k, v, t));
  }
  if (inner.markDoneBatch) {
    const many = inner.markDoneBatch.bind(inner);
    repo.markDoneBatch = async (reqs: readonly MarkDoneRequest[]): Promise<ClaimReply[]> => {
      const kept = reqs.filter((r) => !fails(r.key));
      const res = kept.length > 0 ? await many(kept) : [];
      let j = 0;
      return reqs.map((r) => (fails(r.key) ? boom() : res[j++]!));
    };
  }
  return repo;
}

/** Registers the tests; `make` gives a fresh store per test. */
export function producedMessagesSuite(make: () => ProducedStore): void {
  function harness(batchSize: number, opts: { failMarks?: (key: string) => boolean; leaseMs?: number } = {}) {
    const store = make();
    const repository = opts.failMarks ? failingDoneMarks(store.repository, opts.failMarks) : store.repository;
    const failedOnce = new Set<string>();
    // The output topic refuses the first publish of each produced message, as a broker hiccup would.
    const ps = new MemoryPubSub({
      batchSize,
      nackResendDelayMs: 1,
      beforePublish: (topic, msgs) => {
        if (topic !== OUT) return;
        const fresh = msgs.filter((m) => !failedOnce.has(m.uuid));
        for (const m of fresh) failedOnce.add(m.uuid);
        if (fresh.length > 0) throw new Error(`broker hiccup on ${fresh.map((m) => m.uuid).join(",")}`);
      },
    });
    let runs = 0;
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "confirm",
      topic: IN,
      subscriber: ps,
      publisher: ps,
      publishTopic: OUT,
      middleware: defaultStack({
        dlqPublisher: ps,
        dlqTopic: DLQ,
        retry: { maxRetries: 3, initialIntervalMs: 1, maxIntervalMs: 5 },
        dedup: { repository, service: store.service, leaseMs: opts.leaseMs ?? 60_000, logger: () => undefined },
      }),
      handler: async (msg: Message) => {
        runs++;
        return [newMessage(`out-${msg.uuid}`, `confirmed ${payloadText(msg)}`)];
      },
    });
    const inputs = Array.from({ length: 20 }, (_, i) => newMessage(`in-${i}`, `order ${i}`));
    /** Published copies per produced uuid. */
    const published = () => {
      const n = new Map<string, number>();
      for (const m of ps.messages(OUT)) n.set(m.uuid, (n.get(m.uuid) ?? 0) + 1);
      return n;
    };
    const start = async () => {
      void router.run();
      await router.running;
    };
    const stop = async () => {
      await router.close();
      await ps.close();
    };
    return { ps, inputs, published, start, stop, runs: () => runs, failedOnce };
  }

  for (const batchSize of [1, 10]) {
    const mode = batchSize === 1 ? "single deliveries" : "batches of 10";
    it(`${mode}: every output whose first publish failed is published, exactly once, and a redelivery publishes none again`, async () => {
      const h = harness(batchSize);
      await h.start();
      await h.ps.publish(IN, ...h.inputs);
      await h.ps.idle();
      const first = h.published();
      expect(h.failedOnce.size).toBe(20);
      expect(first.size).toBe(20);
      expect([...first.values()].every((n) => n === 1)).toBe(true);
      expect(h.ps.messages(DLQ)).toHaveLength(0);
      // The same inputs again (a redelivery, a producer retry): swallowed, no output published twice.
      await h.ps.publish(IN, ...h.inputs.map((m) => newMessage(m.uuid, payloadText(m))));
      await h.ps.idle();
      expect([...h.published().values()]).toEqual(Array(20).fill(1));
      await h.stop();
    });

    it(`${mode}: when the done mark fails after the publish landed, the redelivery publishes that output twice (at least once, not at most once)`, async () => {
      // Marks of 5 inputs fail; their short leases expire, and their copies run the handler again.
      const failing = new Set(["in-0", "in-3", "in-7", "in-12", "in-19"]);
      const h = harness(batchSize, { failMarks: (k) => failing.has(k.slice(k.lastIndexOf(":") + 1)), leaseMs: 150 });
      await h.start();
      await h.ps.publish(IN, ...h.inputs);
      await h.ps.idle();
      await new Promise((r) => setTimeout(r, 200));
      await h.ps.publish(IN, ...h.inputs.map((m) => newMessage(m.uuid, payloadText(m))));
      await h.ps.idle();
      const twice = [...h.published()].filter(([, n]) => n === 2).map(([u]) => u.slice(4));
      expect(new Set(twice)).toEqual(failing);
      expect([...h.published().values()].filter((n) => n === 1)).toHaveLength(15);
      expect(h.runs()).toBe(20 + 20 + 5); // each first publish failed once (a re-run), then the 5 unmarked
      await h.stop();
    });
  }
}
