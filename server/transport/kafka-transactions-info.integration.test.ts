/**
 * On real Kafka: a handler in the Kafka-transactions mode describes itself. Its subscriber's
 * `selfDescribe` middleware exports `dedup_handler_info` with `mode="kafka-transactions"` on the
 * app's registry while the handler relays through its transactions, so a dashboard reading the
 * scrape lists and lints it like the Deduplicator's handlers.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HANDLER_INFO_METRIC, TRANSACTIONS_DECLARATION } from "@/names/contract";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { newMessage, Router } from "@/server/dedup";
import { kcatHeaderValues } from "@/server/testing/kcat";
import { ownKafka, until } from "@/server/testing/own-kafka";
import { KafkaSubscriber } from "./kafka-subscriber";

const k = ownKafka();

describe("Kafka-transactions mode self-description", () => {
  it("a relay in transactions mode exports dedup_handler_info with mode kafka-transactions, its group and its topic, while its outputs commit", async () => {
    const {
      id,
      names: [input, output],
    } = await k.topics("txinfo", { "": 1, ".out": 1 });
    const groupId = k.group("txinfo");
    const registry = new Registry();
    const sub = new KafkaSubscriber({ brokers: k.brokers, groupId, chunkSize: 10, transactions: true });
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "relay",
      topic: input!,
      subscriber: sub,
      publisher: sub.transactionalPublisher,
      publishTopic: output!,
      middleware: [sub.selfDescribe({ registry, service: "txinfo", sideEffects: ["kafka"] })],
      handler: async (msg) => [newMessage(`out-${msg.uuid}`, msg.payload)],
    });
    const uuids = [1, 2, 3].map((i) => `${id}-${i}`);
    await k.kafka.publisher.publish(input!, ...uuids.map((u) => newMessage(u, "order")));
    void router.run();
    await router.running;
    try {
      const brokers = k.brokers.join(",");
      await until(
        async () => (await kcatHeaderValues(brokers, output!, WATERMILL_UUID_HEADER, "read_committed")).length >= 3,
        60_000,
        "the relayed outputs",
      );
    } finally {
      await router.close();
    }
    const series = (await registry.getSingleMetric(HANDLER_INFO_METRIC)!.get()).values;
    expect(series).toHaveLength(1);
    const labels = series[0]!.labels;
    expect(series[0]!.value).toBe(1);
    expect(labels).toMatchObject({
      service: "txinfo",
      handler: "relay",
      topic: input,
      group: groupId,
      mode: "kafka-transactions",
      marking: "kafka-transaction",
      failure_mode: "closed",
      side_effects: "kafka",
    });
    for (const l of TRANSACTIONS_DECLARATION.inapplicable) expect(labels).not.toHaveProperty(l);
    // What Prometheus would scrape from the app: the series in the exposition text.
    expect(await registry.metrics()).toMatch(/dedup_handler_info\{[^}]*mode="kafka-transactions"[^}]*\} 1/);
  }, 90_000);
});
