/**
 * The embedded broker's group subscriber gives each delivery its position too, so PoisonQueue's
 * guard holds there as on Kafka (poison-once.integration.test.ts): a record that fails, is copied
 * to the DLQ, and is read again after a rebalance before its offset was committed gets no second copy.
 */
import { describe, expect, it } from "vitest";
import { MemoryRepository, newMessage, type Message, Router, defaultStack } from "@/server/dedup";
import { MemoryBroker } from "./memory-broker";

const until = async (cond: () => boolean, what: string) => {
  const end = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Member A reads the failing record; B joins before A's interval commit; returns the DLQ copies and the reads. */
async function rebalanceBeforeCommit(dlqGuard?: null): Promise<{ copies: readonly Message[]; reads: number }> {
  const broker = new MemoryBroker();
  broker.createTopic("reviews", 1);
  broker.createTopic("reviews.dlq", 1);
  await broker.publisher().publish("reviews", newMessage("01POISON", '{"review":1}'));
  const repository = new MemoryRepository();
  const copies: Message[] = [];
  let reads = 0;
  const routers: Router[] = [];
  const member = async (replica: string) => {
    const router = new Router({ onError: () => undefined });
    routers.push(router);
    router.addHandler({
      name: "h",
      topic: "reviews",
      subscriber: broker.subscriber({ groupId: "g", replica, commitIntervalMs: 60_000 }),
      handler: async () => {
        reads++;
        throw new Error("downstream rejected the review");
      },
      middleware: defaultStack({
        dlqPublisher: broker.publisher(),
        dlqTopic: "reviews.dlq",
        dedup: { repository, service: "svc" },
        retry: { maxRetries: 0 },
        dlqGuard,
      }),
    });
    void router.run();
    await router.running;
  };
  const dlqReader = broker.subscriber({ groupId: "dlq-reader", replica: "r" });
  const stop = new AbortController();
  await dlqReader.subscribe(
    "reviews.dlq",
    {
      deliver: async (m) => (copies.push(m), "ack"),
      deliverBatch: async (ms) => (copies.push(...ms), ms.map(() => "ack" as const)),
    },
    stop.signal,
  );
  await member("a");
  await until(() => copies.length === 1, "the first DLQ copy");
  await member("b");
  await until(() => reads >= 2, "the re-read after the rebalance");
  await new Promise((r) => setTimeout(r, 100));
  stop.abort();
  await Promise.all(routers.map((r) => r.close()));
  await broker.close();
  return { copies, reads };
}

describe("one DLQ copy per poisoned delivery on the embedded broker", () => {
  it("a rebalance between the DLQ publish and the commit re-reads the record, which fails again: one copy", async () => {
    const { copies, reads } = await rebalanceBeforeCommit();
    expect(reads).toBe(2);
    expect(copies.map((m) => m.uuid)).toEqual(["01POISON"]);
  });

  it("without the guard (dlqGuard: null) the same rebalance publishes a second copy", async () => {
    const { copies, reads } = await rebalanceBeforeCommit(null);
    expect(reads).toBe(2);
    expect(copies).toHaveLength(2);
  });
});
