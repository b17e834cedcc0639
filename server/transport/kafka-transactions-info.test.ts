import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { MemoryPubSub, newMessage, Router } from "@/server/dedup";
import { KafkaSubscriber } from "./kafka-subscriber";

/** The `dedup_handler_info` series of `registry`, as label sets. */
async function infoSeries(registry: Registry) {
  const m = registry.getSingleMetric(HANDLER_INFO_METRIC);
  return m ? (await m.get()).values.map((v) => ({ labels: v.labels, value: v.value })) : [];
}

describe("KafkaSubscriber.selfDescribe", () => {
  it("exports dedup_handler_info with mode kafka-transactions for every handler it is registered with, leaving deliveries untouched", async () => {
    const registry = new Registry();
    const sub = new KafkaSubscriber({ brokers: ["127.0.0.1:9"], groupId: "billing.relay", transactions: true });
    const mw = sub.selfDescribe({ registry, service: "billing", sideEffects: ["kafka"] });
    const router = new Router({ onError: () => undefined });
    const bus = new MemoryPubSub();
    router.addHandler({
      name: "relay",
      topic: "orders",
      subscriber: bus,
      handler: async () => undefined,
      middleware: [mw],
    });
    expect(await infoSeries(registry)).toEqual([
      {
        value: 1,
        labels: {
          service: "billing",
          handler: "relay",
          topic: "orders",
          group: "billing.relay",
          marking: "kafka-transaction",
          failure_mode: "closed",
          stack: "kafkaTransactions",
          runtime: "node",
          contract: "1",
          side_effects: "kafka",
          mode: "kafka-transactions",
        },
      },
    ]);
    const out = [newMessage("out-1", "x")];
    expect(await mw(async () => out)(newMessage("in-1", "y"))).toBe(out);
  });

  it("refuses a subscriber without transactions: its info would declare a guarantee it lacks", () => {
    const sub = new KafkaSubscriber({ brokers: ["127.0.0.1:9"], groupId: "g" });
    expect(() => sub.selfDescribe({ registry: new Registry() })).toThrow(RangeError);
  });
});
