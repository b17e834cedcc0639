/**
 * The duplicate-cause split, run against any repository (memory: `duplicate-cause.test.ts`; Redis
 * standalone and Cluster: `duplicate-cause.integration.test.ts`): the `done` value stores the first
 * delivery's `topic:partition:offset`, and a swallowed copy is counted as `redelivery` (same
 * position), `republish` (another position) or `unknown` (no position on one side).
 */
import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { Deduplicator } from "./deduplicator";
import type { Message } from "../message";
import { dedupMetrics } from "../metrics/metrics";
import { MemoryPubSub } from "../pubsub";
import type { DedupRepository } from "../repository/repository";
import { Router } from "../router/router";
import type { PayloadConflictAction } from "./deduplicator-options";
import { payloadFingerprint } from "../repository/stored-value";
import { payloadText } from "../message";
import { poisonQueue } from "../middleware/poison-queue";
import { POISON_REASON_CLASS, REASON_POISONED_KEY } from "../../../names/dedup";

/** What the suite needs from a store: the repository and a way to read a key's raw value. */
export interface CauseStore {
  repository: DedupRepository;
  get(key: string): Promise<string | null>;
  /** Key prefix isolation: a fresh service name per test. */
  service: string;
}

const NEVER = new AbortController().signal;

/** A message as a Kafka-like transport delivers it: with its position (or none). */
export function at(uuid: string, pos?: { topic?: string; partition: number; offset: number }, payload = "{}"): Message {
  const context = pos ? { topic: pos.topic ?? "orders", partition: pos.partition, offset: String(pos.offset) } : {};
  return { uuid, metadata: {}, payload: Buffer.from(payload), signal: NEVER, context };
}

/** `#<fingerprint>` of the payload `at` sends by default. */
const FP = `#${payloadFingerprint(Buffer.from("{}"))}`;

/** Registers the split's tests; `make` gives a fresh store per test. */
export function duplicateCauseSuite(make: () => CauseStore): void {
  function harness(onPayloadConflict?: PayloadConflictAction) {
    const store = make();
    const registry = new Registry();
    const dedup = new Deduplicator({
      repository: store.repository,
      service: store.service,
      registry,
      ...(onPayloadConflict ? { onPayloadConflict } : {}),
      logger: () => undefined,
    });
    const dlq = new MemoryPubSub();
    const router = new Router({ onError: (e) => console.error(e.error) });
    let runs = 0;
    const pq = poisonQueue(dlq, "orders.dlq", { registry, service: store.service });
    router.addHandler({
      name: "h",
      topic: "orders",
      subscriber: new MemoryPubSub(),
      handler: async () => void runs++,
      middleware: [pq, dedup.middleware],
    });
    const sink = router.sink("h");
    const causes = async () =>
      Object.fromEntries(
        (await dedupMetrics(registry).duplicatesByCause.get()).values.map((v) => [String(v.labels.cause), v.value]),
      );
    const deduplicated = async () =>
      (await dedupMetrics(registry).deduplicated.get()).values.reduce((a, v) => a + v.value, 0);
    const key = (uuid: string) => `${store.service}:dedup:h:${uuid}`;
    const conflicts = async () =>
      (await dedupMetrics(registry).payloadConflicts.get()).values.reduce((a, v) => a + v.value, 0);
    const poisonedConflicts = async () =>
      (await dedupMetrics(registry).poisoned.get()).values.find(
        (v) => v.labels.reason_poisoned === POISON_REASON_CLASS.payloadConflict,
      )?.value;
    return {
      store,
      sink,
      causes,
      deduplicated,
      key,
      runs: () => runs,
      conflicts,
      poisonedConflicts,
      dlq: () => dlq.messages("orders.dlq"),
    };
  }

  it("the done value stores the first delivery's topic:partition:offset (batch and single delivery)", async () => {
    const { store, sink, key } = harness();
    expect(
      await sink.deliverBatch([at("a", { partition: 2, offset: 41 }), at("b", { partition: 2, offset: 42 })]),
    ).toEqual(["ack", "ack"]);
    await sink.flush?.();
    expect(await sink.deliver(at("c", { partition: 0, offset: 7 }))).toBe("ack");
    expect(await store.get(key("a"))).toBe(`done:orders:2:41${FP}`);
    expect(await store.get(key("b"))).toBe(`done:orders:2:42${FP}`);
    expect(await store.get(key("c"))).toBe(`done:orders:0:7${FP}`);
  });

  it("same offset → redelivery; another offset → republish (batch and single paths); counts sum to deduplicated", async () => {
    const { sink, causes, deduplicated, runs } = harness();
    await sink.deliverBatch([at("a", { partition: 2, offset: 41 }), at("b", { partition: 2, offset: 42 })]);
    await sink.flush?.();
    // A rebalance re-reads the uncommitted tail: the same positions.
    await sink.deliverBatch([at("a", { partition: 2, offset: 41 }), at("b", { partition: 2, offset: 42 })]);
    await sink.flush?.();
    // The forwarder re-published "a": a new record at another offset (other partition, too).
    await sink.deliverBatch([at("a", { partition: 5, offset: 900 })]);
    await sink.flush?.();
    await sink.deliver(at("b", { partition: 2, offset: 42 }));
    await sink.deliver(at("b", { partition: 2, offset: 43 }));
    expect(runs()).toBe(2);
    expect(await causes()).toEqual({ redelivery: 3, republish: 2, unknown: 0 });
    expect(await deduplicated()).toBe(5);
  });

  it("a copy inside the same batch at another offset is a republish (no round trip needed)", async () => {
    const { sink, causes } = harness();
    await sink.deliverBatch([at("x", { partition: 1, offset: 10 }), at("x", { partition: 1, offset: 11 })]);
    await sink.flush?.();
    expect(await causes()).toEqual({ redelivery: 0, republish: 1, unknown: 0 });
  });

  it("no position on either side → unknown, and the value is done with the fingerprint only", async () => {
    const { store, sink, causes, key } = harness();
    await sink.deliver(at("p"));
    expect(await store.get(key("p"))).toBe(`done${FP}`);
    await sink.deliver(at("p", { partition: 0, offset: 1 }));
    await sink.deliver(at("q", { partition: 0, offset: 2 }));
    await sink.deliver(at("q"));
    expect(await causes()).toEqual({ redelivery: 0, republish: 0, unknown: 2 });
  });

  it("a done UUID with another payload is a conflict: counted, poisoned to the DLQ by default (single and batch paths), never swallowed", async () => {
    const { sink, runs, conflicts, poisonedConflicts, deduplicated, dlq } = harness();
    await sink.deliver(at("a", { partition: 0, offset: 1 }, '{"amount":10}'));
    // The same message again: a repeat, swallowed.
    expect(await sink.deliver(at("a", { partition: 0, offset: 2 }, '{"amount":10}'))).toBe("ack");
    // Another message under the reused UUID: single delivery, a later batch, and inside one batch.
    expect(await sink.deliver(at("a", { partition: 0, offset: 3 }, '{"amount":99}'))).toBe("ack");
    expect(
      await sink.deliverBatch([
        at("a", { partition: 0, offset: 4 }, '{"amount":98}'),
        at("b", { partition: 0, offset: 5 }, "1"),
        at("b", { partition: 0, offset: 6 }, "2"),
      ]),
    ).toEqual(["ack", "ack", "ack"]);
    await sink.flush?.();
    expect(runs()).toBe(2);
    expect(await deduplicated()).toBe(1);
    expect(await conflicts()).toBe(3);
    expect(await poisonedConflicts()).toBe(3);
    expect(dlq().map((m) => [m.uuid, payloadText(m)])).toEqual([
      ["a", '{"amount":99}'],
      ["a", '{"amount":98}'],
      ["b", "2"],
    ]);
    expect(dlq()[0]!.metadata[REASON_POISONED_KEY]).toMatch(/payload conflict/);
  });

  it('onPayloadConflict "swallow": counted, acked as a duplicate, nothing in the DLQ; a value written before fingerprints is never a conflict', async () => {
    const { store, sink, conflicts, deduplicated, dlq, key } = harness("swallow");
    await sink.deliver(at("a", { partition: 0, offset: 1 }, "x"));
    expect(await sink.deliver(at("a", { partition: 0, offset: 2 }, "y"))).toBe("ack");
    await store.repository.claim(key("old"), "done:orders:0:9", 60_000);
    expect(await sink.deliver(at("old", { partition: 0, offset: 10 }, "z"))).toBe("ack");
    expect(await conflicts()).toBe(1);
    expect(await deduplicated()).toBe(2);
    expect(dlq()).toHaveLength(0);
  });
}
