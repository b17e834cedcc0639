/**
 * On real Kafka and Redis, with the library's default stack: a handler that fails on a record gets
 * it ONE copy in the DLQ even when the record is read again — the consumer group rebalances (a
 * second member joins) after the copy was published and before the record's offset was committed,
 * the new generation re-reads it, the handler runs and fails again, and PoisonQueue's guard on the
 * Deduplicator's repository acks the re-read without a second copy.
 */
import { randomBytes } from "node:crypto";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { RedisRepository, Router, defaultStack } from "@/server/dedup";
import { registryTotal } from "@/server/testing/counter-total";
import { kcatOffsets, kcatProduce } from "@/server/testing/kcat";
import { ownKafka, until } from "@/server/testing/own-kafka";
import { METRIC_NAMES, WATERMILL_UUID_HEADER } from "@/names/dedup";
import { dedupKeyPrefix } from "@/names/keys";
import { poisonedCopyKey } from "@/names/dlq";
import { KafkaSubscriber } from "./kafka-subscriber";

const k = ownKafka();
const routers: Router[] = [];
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close()));
});

/** One group member: its own Router, subscriber and registry; `reads` counts the handler's runs. */
interface Member {
  router: Router;
  subscriber: KafkaSubscriber;
  registry: Registry;
  reads: number;
}

describe("one DLQ copy per poisoned delivery", () => {
  it("a rebalance between a handler failure's DLQ publish and the offset commit: the record is read and fails again, the DLQ has one copy", async () => {
    const {
      names: [topic, dlq],
    } = await k.topics("poisononce", { "": 1, ".dlq": 1 });
    const groupId = k.group("poisononce");
    const service = `poisononce${randomBytes(3).toString("hex")}`;
    const uuid = `01POISONONCE${randomBytes(4).toString("hex").toUpperCase()}`;
    k.forget(
      `${dedupKeyPrefix(service, "h")}:${uuid}`,
      poisonedCopyKey({ service, handler: "h", topic: topic!, partition: 0, offset: "0", uuid }),
    );
    await kcatProduce(k.brokers.join(","), topic!, 0, '{"review":1}', {
      [WATERMILL_UUID_HEADER]: uuid,
      "Event-Type": "review.created",
    });
    const repository = new RedisRepository(k.redis);

    const member = (): Member => {
      const router = new Router({ onError: () => undefined });
      routers.push(router);
      const registry = new Registry();
      const m: Member = { router, registry, reads: 0, subscriber: undefined! };
      // Acked offsets are committed at most once a minute: the record's ack stays uncommitted while
      // the group rebalances, so the new generation reads it again. A short session for a quick join.
      m.subscriber = new KafkaSubscriber({
        brokers: k.brokers,
        groupId,
        commitIntervalMs: 60_000,
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 500,
      });
      router.addHandler({
        name: "h",
        topic: topic!,
        subscriber: m.subscriber,
        handler: async () => {
          m.reads++;
          throw new Error("downstream rejected the review");
        },
        // What every consumer built with the library gets: the guard is the Deduplicator's repository by default.
        middleware: defaultStack({
          dlqPublisher: k.kafka.publisher,
          dlqTopic: dlq!,
          dedup: { repository, service, registry },
          retry: { maxRetries: 0 },
        }),
      });
      void router.run();
      return m;
    };

    const a = member();
    await until(async () => (await kcatOffsets(k.brokers.join(","), dlq!, 0)).length > 0, 30_000, "the first DLQ copy");
    expect(a.reads).toBe(1);
    // B joins before A committed the record's offset: the group rebalances and its new generation re-reads the record.
    const b = member();
    await b.router.running;
    await until(() => a.reads + b.reads >= 2, 30_000, "the record to be read again after the rebalance");
    // A second copy, if any, is published right after the re-read's failure; give it time to land.
    await new Promise((r) => setTimeout(r, 1_500));

    expect(await kcatOffsets(k.brokers.join(","), dlq!, 0)).toEqual(["0"]);
    expect(a.reads + b.reads).toBe(2);
    // One poisoning counted for the one record, by the read that published its copy.
    const poisoned =
      (await registryTotal(a.registry, METRIC_NAMES.poisoned)) +
      (await registryTotal(b.registry, METRIC_NAMES.poisoned));
    expect(poisoned).toBe(1);
  }, 60_000);
});
