import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { InProgressError } from "./errors";
import { lintHandler, RECOMMENDED_SETUP } from "./lint";
import { MemoryRepository } from "./repository/memory-repository";
import { namedMiddleware, newMessage, type Handler, type Message, type Middleware } from "./message";
import { METRIC_NAMES } from "../../names/dedup";
import { STACK_ORDER, stackOrder } from "../../names/stack";
import { MemoryPubSub } from "./pubsub";
import { oneHandlerRouter } from "@/server/testing/one-handler-router";
import { defaultStack, describeStack, notInProgress } from "./stack";

describe("defaultStack", () => {
  it("is the spec's order, the lint is silent on it, and only the deduplicator has a batch hook", () => {
    const ps = new MemoryPubSub();
    const stack = defaultStack({ dlqPublisher: ps, dlqTopic: "dlq", dedup: { repository: new MemoryRepository() } });
    expect(describeStack(stack)).toEqual([...STACK_ORDER]);
    expect(lintHandler({ ...RECOMMENDED_SETUP, stack: describeStack(stack) })).toEqual([]);
    expect(stack.map((m) => typeof m.prepareBatch === "function")).toEqual([false, false, false, false, true]);
    expect(notInProgress(new InProgressError("k"))).toBe(false);
    expect(notInProgress(new Error("x"))).toBe(true);
  });

  it("end to end over batches: repeats swallowed, a failing message retried within its batch, nothing lost", async () => {
    const ps = new MemoryPubSub({ batchSize: 8, nackResendDelayMs: 1 });
    const repo = new MemoryRepository();
    const registry = new Registry();
    const runs = new Map<string, number>();
    let failuresLeft = 2;
    const router = oneHandlerRouter({
      topic: "in",
      subscriber: ps,
      handler: async (m: Message) => {
        if (m.uuid === "e5" && failuresLeft-- > 0) throw new Error("transient");
        runs.set(m.uuid, (runs.get(m.uuid) ?? 0) + 1);
      },
      middleware: defaultStack({
        dlqPublisher: ps,
        dlqTopic: "in.dlq",
        dedup: { repository: repo, service: "svc", registry },
        retry: { initialIntervalMs: 1, maxIntervalMs: 2 },
      }),
    });
    const running = router.run();
    await router.running;
    const ids = Array.from({ length: 20 }, (_, i) => `e${i}`);
    // Every event twice (forwarder re-publish), some copies in the same batch, some in the next.
    await ps.publish("in", ...ids.flatMap((u) => [newMessage(u, ""), newMessage(u, "")]));
    await ps.publish("in", ...ids.slice(0, 5).map((u) => newMessage(u, "")));
    await ps.idle();
    await router.close();
    await running;
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect(ids.every((u) => /^done#[A-Za-z0-9_-]{7}$/.test(repo.get(`svc:dedup:h:${u}`) ?? ""))).toBe(true);
    expect(ps.messages("in.dlq")).toHaveLength(0);
    const processed = await registry.getSingleMetric(METRIC_NAMES.processed)!.get();
    const by = Object.fromEntries(processed.values.map((v) => [v.labels.result, v.value]));
    expect(by).toEqual({ success: 20, error: 0, deduplicated: 25 });
  });

  it("orders, slots and no-Deduplicator: what the workshop builds, read back by the lint", () => {
    const ps = new MemoryPubSub();
    const probe = (name: string): Middleware => namedMiddleware(name, (next) => next);
    const base = { dlqPublisher: ps, dlqTopic: "dlq", outermost: [probe("delivery")], beforeDedup: [probe("attempt")] };
    const spec = defaultStack({ ...base, dedup: { repository: new MemoryRepository() } });
    expect(describeStack(spec)).toEqual(["delivery", ...STACK_ORDER.slice(0, 4), "attempt", "deduplicator"]);
    const outside = defaultStack({ ...base, order: "dedup-outside", dedup: { repository: new MemoryRepository() } });
    expect(describeStack(outside)).toEqual([
      "delivery",
      "correlationId",
      "recoverer",
      "attempt",
      "deduplicator",
      "poisonQueue",
      "retry",
    ]);
    expect(describeStack(outside)).toEqual([
      "delivery",
      ...stackOrder("dedup-outside").flatMap((n) => (n === "deduplicator" ? ["attempt", n] : [n])),
    ]);
    expect(lintHandler({ ...RECOMMENDED_SETUP, stack: describeStack(outside) }).map((f) => f.rule)).toEqual([
      "dedup-outside-retry",
      "dedup-outside-poison-queue",
    ]);
    const none = defaultStack({ ...base, dedup: null });
    expect(describeStack(none)).toEqual(["delivery", ...STACK_ORDER.slice(0, 4), "attempt"]);
    expect(lintHandler({ ...RECOMMENDED_SETUP, stack: describeStack(none) }).map((f) => f.rule)).toEqual([
      "no-deduplicator",
    ]);
  });

  it("guards the DLQ copy with the Deduplicator's repository: a delivery position poisoned twice has one copy; dlqGuard null turns it off", async () => {
    const copies = async (extra: { dlqGuard?: null }) => {
      const ps = new MemoryPubSub();
      const stack = defaultStack({
        dlqPublisher: ps,
        dlqTopic: "in.dlq",
        dedup: { repository: new MemoryRepository(), service: "svc" },
        retry: { maxRetries: 0 },
        ...extra,
      });
      const h = stack.reduceRight<Handler>(
        (next, mw) => mw(next),
        async () => Promise.reject(new Error("db down")),
      );
      for (let read = 0; read < 2; read++) {
        // The same record read twice (a rebalance before its offset was committed): same uuid, same position.
        const m = newMessage("e1", "");
        m.context = { handler: "h", topic: "in", partition: 0, offset: "7" };
        await h(m);
      }
      return ps.messages("in.dlq").length;
    };
    expect(await copies({})).toBe(1);
    expect(await copies({ dlqGuard: null })).toBe(2);
  });
});
