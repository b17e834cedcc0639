/**
 * A Kafka-to-Kafka handler for `bench:consumer` (variants `relay`, `relaytx`, `relaydedup`): one
 * output per input to a topic of the round, published by
 *   plain   a `KafkaPublisher` (acks = all) inside the Router's stack, no middleware;
 *   tx      the subscriber's transactional publisher: the Kafka-transactions mode (one transaction
 *           per chunk: the outputs, then the consumed offsets, then the commit);
 *   dedup   a `KafkaPublisher` under the default stack with the Redis Deduplicator (the Redis mode).
 * A message counts once its output was sent (an outermost middleware sees the stack return).
 */
import { Registry } from "prom-client";
import type { Kafka } from "kafkajs";
import { defaultStack, type Middleware, newMessage, type DedupRepository, Router } from "@/server/dedup";
import { KafkaPublisher } from "@/server/transport/kafka-publisher";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { arrivals, type ConsumeFigures } from "./clock";
import { FailingDlq } from "./ours";

/** One consume through a relay handler. */
export interface RelayRound {
  kafka: Kafka;
  brokers: string[];
  topic: string;
  n: number;
  groupId: string;
  mode: "plain" | "tx" | "dedup";
  /** The Redis mode's store. */
  repository?: DedupRepository;
  service: string;
  chunk: number;
  concurrency: number;
}

/** Consumes the whole topic, relaying each message to `<topic>.<group>.out` (created and deleted here). */
export async function consumeRelay(o: RelayRound): Promise<ConsumeFigures> {
  const output = `${o.topic}.${o.groupId}.out`;
  const admin = o.kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: output, numPartitions: 3 }], waitForLeaders: true });
  const router = new Router({ onError: (e) => console.error(`[bench] nack ${e.uuid ?? "batch"}: ${e.error.message}`) });
  const subscriber = new KafkaSubscriber({
    brokers: o.brokers,
    groupId: o.groupId,
    chunkSize: o.chunk,
    partitionsConsumedConcurrently: o.concurrency,
    transactions: o.mode === "tx",
  });
  const plain = new KafkaPublisher({ brokers: o.brokers, clientId: `bench-relay-${o.groupId}` });
  const clock = arrivals(o.n);
  const count: Middleware = (next) => async (msg) => {
    const out = await next(msg);
    clock.seen(1);
    return out;
  };
  const stack =
    o.mode === "dedup"
      ? defaultStack({
          dlqPublisher: new FailingDlq(),
          dlqTopic: `${o.topic}.dlq`,
          dedup: { repository: o.repository!, service: o.service, registry: new Registry() },
        })
      : [];
  router.addHandler({
    name: "h",
    topic: o.topic,
    subscriber,
    publisher: o.mode === "tx" ? subscriber.transactionalPublisher : plain,
    publishTopic: output,
    middleware: [count, ...stack],
    handler: async (msg) => [newMessage(`out-${msg.uuid}`, msg.payload)],
  });
  const running = router.run();
  try {
    await Promise.race([
      clock.finished,
      running.then(() => Promise.reject(new Error("router stopped before the topic was consumed"))),
    ]);
  } finally {
    await router.close();
    await subscriber.close();
    await plain.close();
    await admin.deleteTopics({ topics: [output] }).catch(() => undefined);
    await admin.disconnect();
  }
  return clock.result();
}
