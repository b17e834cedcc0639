/**
 * Our consumer path for `bench:consumer`: `KafkaSubscriber` → `Router` → the default stack
 * (correlationId, recoverer, poisonQueue, retry, Deduplicator with batch pre-claims and batched
 * done marks, metrics on a private Registry) → a no-op handler; without the stack when no
 * repository is given (the transport alone).
 */
import { Registry } from "prom-client";
import { type Marking, type Message, type Publisher, type DedupRepository, Router, defaultStack } from "@/server/dedup";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { arrivals, type ConsumeFigures } from "./clock";

/** Publisher of the default stack's DLQ: nothing fails in this bench, so nothing may arrive here. */
export class FailingDlq implements Publisher {
  async publish(topic: string, ...msgs: Message[]): Promise<void> {
    throw new Error(
      `bench-consumer: ${msgs.length} message(s) reached the DLQ ${topic}; the no-op handler never fails, so this is a bug`,
    );
  }
  async close(): Promise<void> {}
}

/** One consume through our path. */
export interface OursRound {
  brokers: string[];
  topic: string;
  /** Messages in the topic: the consume ends at the `n`th. */
  n: number;
  groupId: string;
  /** The Deduplicator's store; null for the transport alone (no middleware). */
  repository: DedupRepository | null;
  marking: Marking;
  /** The Deduplicator's service: its keys go under `<service>:`. */
  service: string;
  chunk: number;
  commitIntervalMs: number;
  concurrency: number;
}

/** Consumes the whole topic through KafkaSubscriber → Router → (default stack | nothing) → no-op. */
export async function consumeOurs(o: OursRound): Promise<ConsumeFigures> {
  const router = new Router({ onError: (e) => console.error(`[bench] nack ${e.uuid ?? "batch"}: ${e.error.message}`) });
  const subscriber = new KafkaSubscriber({
    brokers: o.brokers,
    groupId: o.groupId,
    chunkSize: o.chunk,
    commitIntervalMs: o.commitIntervalMs,
    partitionsConsumedConcurrently: o.concurrency,
  });
  const clock = arrivals(o.n);
  const middleware = o.repository
    ? defaultStack({
        dlqPublisher: new FailingDlq(),
        dlqTopic: `${o.topic}.dlq`,
        dedup: { repository: o.repository, service: o.service, marking: o.marking, registry: new Registry() },
      })
    : [];
  router.addHandler({
    name: "h",
    topic: o.topic,
    subscriber,
    middleware,
    handler: async () => {
      clock.seen(1);
    },
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
  }
  return clock.result();
}
