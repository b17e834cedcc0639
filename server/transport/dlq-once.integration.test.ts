/**
 * On real Kafka and Redis: a record without a UUID read twice has ONE copy in the DLQ, keyed by its
 * source position — when it is re-read by a consumer that starts with no committed offset (a
 * restart before the commit), and when the consumer group rebalances after the copy was published
 * and before the commit landed (a second member joins while the first is still sending the copy).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Publisher, RedisRepository, Router } from "@/server/dedup";
import { kcatOffsets } from "@/server/testing/kcat";
import { ownKafka, until } from "@/server/testing/own-kafka";
import { OFFSET_POISONED_KEY, PARTITION_POISONED_KEY, TOPIC_POISONED_KEY } from "@/names/dedup";
import { dlqCopyKey } from "@/names/dlq";
import { KafkaSubscriber, type KafkaSubscriberOptions } from "./kafka-subscriber";

const k = ownKafka();
const routers: Router[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close()));
});

/** What one group member saw: reads of the record (it claimed it) and reports (`onUnreadable`: counted, sent). */
interface Member {
  router: Router;
  subscriber: KafkaSubscriber;
  reads: number;
  reported: number;
}

/** A group member (own Router and KafkaSubscriber) reading `topic`, its unreadable records to `dlq.topic`. */
function member(
  topic: string,
  groupId: string,
  dlq: KafkaSubscriberOptions["dlq"],
  extra: Partial<KafkaSubscriberOptions> = {},
): Member {
  const router = new Router({ onError: () => undefined });
  routers.push(router);
  const m: Member = { router, subscriber: undefined!, reads: 0, reported: 0 };
  m.subscriber = new KafkaSubscriber({
    brokers: k.brokers,
    groupId,
    dlq,
    onUnreadable: () => void m.reported++,
    claimsUnreadable: () => (m.reads++, true),
    ...extra,
  });
  router.addHandler({ name: "h", topic, subscriber: m.subscriber, handler: async () => undefined });
  void router.run();
  return m;
}

/** A topic with one record without a UUID at offset 0, and its DLQ topic. */
async function poisonedTopic(stem: string): Promise<{ topic: string; dlq: string }> {
  const {
    names: [topic, dlq],
  } = await k.topics(stem, { "": 1, ".dlq": 1 });
  await k.kafka.produceRaw(topic!, {
    headers: { "Event-Type": "review.created" },
    value: Buffer.from('{"no":"uuid"}'),
  });
  k.forget(dlqCopyKey(topic!, 0, "0"));
  return { topic: topic!, dlq: dlq! };
}

describe("one DLQ copy per record without a UUID", () => {
  it("read again before its commit, the record's DLQ copy is not published twice; its position is in the copy's headers", async () => {
    const { topic, dlq } = await poisonedTopic("dlqonce");
    const repository = new RedisRepository(k.redis);
    const reads: number[] = [];
    const reported: number[] = [];
    // Two consumers one after the other, each in a fresh group: the second starts with no committed offset.
    for (let i = 0; i < 2; i++) {
      const m = member(topic, k.group("dlqonce"), { publisher: k.kafka.publisher, topic: dlq, repository });
      await m.router.running;
      await until(() => m.reads > 0, 30_000, "the read of the record");
      // The read owns the record now; give its DLQ publish and report time to land before the stop.
      await new Promise((r) => setTimeout(r, 1_000));
      await m.router.close();
      reads.push(m.reads);
      reported.push(m.reported);
    }
    const copies = await k.kafka.readAll(dlq);
    expect(reads).toEqual([1, 1]);
    expect(copies).toHaveLength(1);
    expect(copies[0]!.metadata[TOPIC_POISONED_KEY]).toBe(topic);
    expect(copies[0]!.metadata[PARTITION_POISONED_KEY]).toBe("0");
    expect(copies[0]!.metadata[OFFSET_POISONED_KEY]).toBe("0");
    // Reported (counted as a marshal error and a DLQ message) once, by the read that sent it.
    expect(reported).toEqual([1, 0]);
  }, 60_000);

  /**
   * Member A reads the record and publishes its DLQ copy; once the copy has landed, member B joins
   * the group while A is still inside the publish (no heartbeat, no commit). The group rebalances
   * without A (its session expires), B is assigned the partition and re-reads the record from the
   * last committed offset; A's commit is refused. Returns the copies in the DLQ (read by `kcat`).
   */
  async function rebalanceBeforeCommit(
    guarded: boolean,
  ): Promise<{ copies: string[]; a: Member; b: Member; bAssigned: number[] }> {
    const { topic, dlq } = await poisonedTopic("dlqrebal");
    const groupId = k.group("dlqrebal");
    const repository = guarded ? new RedisRepository(k.redis) : undefined;
    // A short session, so the group does not wait the 30 s rebalance timeout for the silent member.
    const session = { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500 };
    let b: Member | undefined;
    let bAssigned: number[] = [];
    const holding: Publisher = {
      publish: async (t, ...msgs) => {
        await k.kafka.publisher.publish(t, ...msgs);
        if (b) return;
        b = member(topic, groupId, { publisher: k.kafka.publisher, topic: dlq, repository }, session);
        await b.router.running; // B's first generation: the group has rebalanced without A
        bAssigned = b.subscriber.assignment.get(topic) ?? [];
      },
      close: async () => undefined,
    };
    const a = member(topic, groupId, { publisher: holding, topic: dlq, repository }, session);
    await a.router.running;
    await until(
      () => b !== undefined && a.reads + b.reads >= 2,
      90_000,
      "the record to be read again after the rebalance",
    );
    // A second copy, if any, is published right after the re-read; give it time to land.
    await new Promise((r) => setTimeout(r, 2_000));
    const copies = await kcatOffsets(k.brokers.join(","), dlq, 0);
    return { copies, a, b: b!, bAssigned };
  }

  it("across a rebalance between the DLQ publish and the commit, the re-read record gets no second copy and is reported once", async () => {
    const { copies, a, b, bAssigned } = await rebalanceBeforeCommit(true);
    // The rebalance really moved the partition to B, and the record was read again.
    expect(bAssigned).toEqual([0]);
    expect(a.reads + b.reads).toBeGreaterThanOrEqual(2);
    expect(copies).toEqual(["0"]);
    expect(a.reported + b.reported).toBe(1);
  }, 120_000);

  it("without the position key (no repository), the same rebalance publishes a second copy", async () => {
    const { copies, a, b, bAssigned } = await rebalanceBeforeCommit(false);
    expect(bAssigned).toEqual([0]);
    expect(copies.length).toBe(a.reads + b.reads);
    expect(copies.length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
