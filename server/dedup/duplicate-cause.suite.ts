/**
 * The duplicate-cause split, run against any repository (memory: `duplicate-cause.test.ts`; Redis
 * standalone and Cluster: `duplicate-cause.integration.test.ts`): the `done` value stores the first
 * delivery's `topic:partition:offset`, and a swallowed copy is counted as `redelivery` (same
 * position), `republish` (another position) or `unknown` (no position on one side).
 */
import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { Deduplicator } from "./deduplicator";
import type { Message } from "./message";
import { dedupMetrics } from "./metrics";
import { MemoryPubSub } from "./pubsub";
import type { DedupRepository } from "./repository";
import { Router } from "./router";

/** What the suite needs from a store: the repository and a way to read a key's raw value. */
export interface CauseStore {
  repository: DedupRepository;
  get(key: string): Promise<string | null>;
  /** Key prefix isolation: a fresh service name per test. */
  service: string;
}

const NEVER = new AbortController().signal;

/** A message as a Kafka-like transport delivers it: with its position (or none). */
export function at(uuid: string, pos?: { topic?: string; partition: number; offset: number }): Message {
  const context = pos ? { topic: pos.topic ?? "orders", partition: pos.partition, offset: String(pos.offset) } : {};
  return { uuid, metadata: {}, payload: Buffer.from("{}"), signal: NEVER, context };
}

/** Registers the split's tests; `make` gives a fresh store per test. */
export function duplicateCauseSuite(make: () => CauseStore): void {
  function harness() {
    const store = make();
    const registry = new Registry();
    const dedup = new Deduplicator({ repository: store.repository, service: store.service, registry });
    const router = new Router({ onError: (e) => console.error(e.error) });
    let runs = 0;
    router.addHandler({ name: "h", topic: "orders", subscriber: new MemoryPubSub(), handler: async () => void runs++, middleware: [dedup.middleware] });
    const sink = router.sink("h");
    const causes = async () => Object.fromEntries((await dedupMetrics(registry).duplicatesByCause.get()).values.map((v) => [String(v.labels.cause), v.value]));
    const deduplicated = async () => (await dedupMetrics(registry).deduplicated.get()).values.reduce((a, v) => a + v.value, 0);
    const key = (uuid: string) => `${store.service}:dedup:h:${uuid}`;
    return { store, sink, causes, deduplicated, key, runs: () => runs };
  }

  it("the done value stores the first delivery's topic:partition:offset (batch and single delivery)", async () => {
    const { store, sink, key } = harness();
    expect(await sink.deliverBatch([at("a", { partition: 2, offset: 41 }), at("b", { partition: 2, offset: 42 })])).toEqual(["ack", "ack"]);
    await sink.flush?.();
    expect(await sink.deliver(at("c", { partition: 0, offset: 7 }))).toBe("ack");
    expect(await store.get(key("a"))).toBe("done:orders:2:41");
    expect(await store.get(key("b"))).toBe("done:orders:2:42");
    expect(await store.get(key("c"))).toBe("done:orders:0:7");
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

  it("no position on either side → unknown, and the value stays plain done", async () => {
    const { store, sink, causes, key } = harness();
    await sink.deliver(at("p"));
    expect(await store.get(key("p"))).toBe("done");
    await sink.deliver(at("p", { partition: 0, offset: 1 }));
    await sink.deliver(at("q", { partition: 0, offset: 2 }));
    await sink.deliver(at("q"));
    expect(await causes()).toEqual({ redelivery: 0, republish: 0, unknown: 2 });
  });
}
