/**
 * The lease-expiry race, run on every store (memory: `lease-race.test.ts`; Redis standalone and
 * Cluster: `redis-repository.suite.ts`). A first owner whose handler outlives `leaseMs` succeeds
 * AFTER a second owner took the expired lease; the second owner's handler then fails. The first
 * success is a fact: the key must end `done`, the second owner's release must not delete it, and a
 * later copy must be swallowed — not run a third time. The first owner's success counts
 * `deduplication_lease_lost_total` once (its lease had been taken over).
 */
import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { isDoneValue } from "../repository/stored-value";
import { newMessage, type Message } from "../message";
import { METRIC_NAMES } from "../../../names/dedup";
import type { DedupRepository } from "../repository/repository";
import { Router } from "../router/router";
import { deduplicator } from "./deduplicator";
import { MemoryPubSub } from "../pubsub";
import { registryTotal } from "@/server/testing/counter-total";

/** What the race needs from a store: repositories on (possibly) separate connections, and a raw read. */
export interface LeaseRaceStore {
  /** A repository for one consumer (each call may open its own connection). */
  repository(consumer: "first" | "second" | "later"): DedupRepository;
  /** The raw stored value of `key` (null when absent). */
  get(key: string): Promise<string | null>;
  /** The service prefix to use (random per run); keys are `<service>:dedup:h:<uuid>`. */
  service(): string;
  /** Called with every key the scenario writes (for cleanup). */
  used?(key: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function consumer(
  repository: DedupRepository,
  service: string,
  leaseMs: number,
  handler: (m: Message) => Promise<void>,
) {
  const registry = new Registry();
  const router = new Router({ onError: () => undefined });
  router.addHandler({
    name: "h",
    topic: "in",
    subscriber: new MemoryPubSub({ nackResendDelayMs: 0 }),
    handler,
    middleware: [deduplicator({ repository, service, registry, leaseMs, ttlMs: 60_000 })],
  });
  return { sink: router.sink("h"), registry };
}

/** Registers the race tests (one per Router path: a single delivery and a batch) in the current describe. */
export function leaseRaceTests(store: LeaseRaceStore): void {
  for (const path of ["single delivery", "batch"] as const) {
    it(`lease-expiry race (${path}): the slow first owner's success stays done although the second owner then fails; a later copy is swallowed`, async () => {
      const service = store.service();
      const uuid = `RACE${path === "batch" ? "B" : "S"}${Math.random().toString(36).slice(2, 8)}`;
      const key = `${service}:dedup:h:${uuid}`;
      store.used?.(key);
      const runs: string[] = [];
      let releaseFirst!: () => void;
      const firstGate = new Promise<void>((r) => (releaseFirst = r));
      let releaseSecond!: () => void;
      const secondGate = new Promise<void>((r) => (releaseSecond = r));
      let secondStarted!: () => void;
      const secondRunning = new Promise<void>((r) => (secondStarted = r));

      const first = consumer(store.repository("first"), service, 300, async (m) => {
        if (m.uuid !== uuid) return;
        runs.push("first");
        await firstGate;
      });
      const second = consumer(store.repository("second"), service, 60_000, async () => {
        runs.push("second");
        secondStarted();
        await secondGate;
        throw new Error("second owner fails");
      });
      const later = consumer(store.repository("later"), service, 60_000, async () => void runs.push("later"));

      const firstDone =
        path === "batch"
          ? first.sink.deliverBatch([newMessage(uuid, ""), newMessage(`${uuid}-other`, "")]).then(async (o) => {
              store.used?.(`${service}:dedup:h:${uuid}-other`);
              await first.sink.flush?.();
              return o;
            })
          : first.sink.deliver(newMessage(uuid, "")).then((o) => [o]);
      await sleep(450); // the first owner's 300 ms lease expires while its handler still runs
      const secondDone = second.sink.deliver(newMessage(uuid, ""));
      await secondRunning; // the second owner took the expired lease and runs
      releaseFirst();
      expect((await firstDone)[0]).toBe("ack");
      expect(isDoneValue((await store.get(key)) ?? "")).toBe(true); // the success is recorded at once
      releaseSecond();
      expect(await secondDone).toBe("nack");

      expect(isDoneValue((await store.get(key)) ?? "")).toBe(true); // the failure did not delete it
      expect(await later.sink.deliver(newMessage(uuid, ""))).toBe("ack");
      expect(runs).toEqual(["first", "second"]); // the later copy was swallowed, not run a third time
      expect(await registryTotal(first.registry, METRIC_NAMES.leaseLost)).toBe(1);
      expect(await registryTotal(second.registry, METRIC_NAMES.leaseLost)).toBe(0);
      expect(await registryTotal(later.registry, METRIC_NAMES.deduplicated)).toBe(1);
    });
  }

  it("a success whose lease merely expired (nobody took it) records done and counts no lost lease", async () => {
    const service = store.service();
    const uuid = `EXP${Math.random().toString(36).slice(2, 8)}`;
    const key = `${service}:dedup:h:${uuid}`;
    store.used?.(key);
    const first = consumer(store.repository("first"), service, 200, async () => {
      await sleep(350);
    });
    expect(await first.sink.deliver(newMessage(uuid, ""))).toBe("ack");
    expect(isDoneValue((await store.get(key)) ?? "")).toBe(true);
    expect(await registryTotal(first.registry, METRIC_NAMES.leaseLost)).toBe(0);
  });
}
