/**
 * On real Kafka and Redis: what a handler returns survives a failed publish. The output publisher
 * (a `KafkaPublisher`) refuses the first publish of each produced message, as a broker hiccup
 * would; every output still lands on its topic exactly once, and the DLQ stays empty.
 */
import { describe, expect, it } from "vitest";
import {
  newMessage,
  payloadText,
  type Message,
  type Publisher,
  RedisRepository,
  Router,
  defaultStack,
} from "@/server/dedup";
import { ownKafka, until } from "@/server/testing/own-kafka";
import { KafkaSubscriber } from "./kafka-subscriber";

const k = ownKafka();

/** `inner`, except that the first publish of each message uuid fails. */
function failingOnce(inner: Publisher): Publisher & { failed: Set<string> } {
  const failed = new Set<string>();
  return {
    failed,
    publish: async (topic: string, ...msgs: Message[]) => {
      const fresh = msgs.filter((m) => !failed.has(m.uuid));
      for (const m of fresh) failed.add(m.uuid);
      if (fresh.length > 0) throw new Error(`broker hiccup (injected) on ${fresh.length} message(s)`);
      await inner.publish(topic, ...msgs);
    },
    close: () => inner.close(),
  };
}

describe("produced messages on Kafka", () => {
  it("20 inputs whose outputs' first publish fails: 20 of 20 outputs on the topic, each once; DLQ empty", async () => {
    const {
      id,
      names: [input, output, dlq],
    } = await k.topics("prodtest", { "": 2, ".out": 1, ".dlq": 1 });
    const service = `prod${id}`;
    const out = failingOnce(k.kafka.newPublisher());
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "confirm",
      topic: input!,
      subscriber: new KafkaSubscriber({
        brokers: k.brokers,
        groupId: k.group("prodtest"),
        chunkSize: 10,
        nackDelayMs: 50,
      }),
      publisher: out,
      publishTopic: output!,
      middleware: defaultStack({
        dlqPublisher: k.kafka.publisher,
        dlqTopic: dlq!,
        retry: { maxRetries: 3, initialIntervalMs: 5, maxIntervalMs: 20 },
        dedup: { repository: new RedisRepository(k.redis), service, logger: () => undefined },
      }),
      handler: async (msg) => [newMessage(`out-${msg.uuid}`, `confirmed ${payloadText(msg)}`)],
    });
    const uuids = Array.from({ length: 20 }, (_, i) => `${id}-${i}`);
    k.forget(...uuids.map((u) => `${service}:dedup:confirm:${u}`));
    await k.kafka.publisher.publish(input!, ...uuids.map((u, i) => newMessage(u, `order ${i}`)));
    void router.run();
    await router.running;
    try {
      await until(async () => (await k.kafka.readAll(output!)).length >= 20);
      // A duplicate would land shortly after; give it the time of a few redeliveries.
      await new Promise((r) => setTimeout(r, 1_500));
      const landed = (await k.kafka.readAll(output!)).map((d) => (d.ok ? d.uuid : "?"));
      expect(out.failed.size).toBe(20);
      expect(landed).toHaveLength(20);
      expect(new Set(landed)).toEqual(new Set(uuids.map((u) => `out-${u}`)));
      expect(await k.kafka.readAll(dlq!)).toHaveLength(0);
    } finally {
      await router.close();
      await out.close();
    }
  }, 60_000);
});
