/**
 * The references of `bench:consumer`, plain kafkajs consumers: `raw` (eachBatch + no-op), the
 * `floor` (eachBatch + one pipeline of `SET key 1 NX PX ttl` per batch, awaited before the batch
 * resolves: the least Redis work of any Redis-backed dedup) and the `naive` peer (eachMessage + an
 * awaited `SET … PX … NX` per message, every partition at once: what a user writes from the seed's
 * snippet, with a plain `new Redis(url)`).
 */
import type { Redis } from "ioredis";
import type { Consumer, Kafka } from "kafkajs";
import { arrivals, type Arrivals, type ConsumeFigures } from "./clock";

/** The dedup key TTL of the two Redis references (the Deduplicator's default window, 24 h). */
const REF_TTL_MS = 86_400_000;
/** KafkaSubscriber's default maxWaitTimeMs: the same fetch settings for every consumer. */
const MAX_WAIT_MS = 250;

/** Where a kafkajs reference reads and, for floor and naive, writes its keys. */
export interface KafkajsRound {
  kafka: Kafka;
  topic: string;
  /** Messages in the topic: the consume ends at the `n`th. */
  n: number;
  groupId: string;
  /** partitionsConsumedConcurrently of the eachBatch consumers. */
  concurrency: number;
}

/** Consumes the whole topic with a fresh kafkajs consumer that `start`s its run loop. */
async function consumeWith(
  r: KafkajsRound,
  start: (consumer: Consumer, clock: Arrivals) => Promise<void>,
): Promise<ConsumeFigures> {
  const consumer = r.kafka.consumer({
    groupId: r.groupId,
    maxWaitTimeInMs: MAX_WAIT_MS,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
  });
  const clock = arrivals(r.n);
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: r.topic, fromBeginning: true });
    await start(consumer, clock);
    await clock.finished;
  } finally {
    await consumer.disconnect();
  }
  return clock.result();
}

/** The Watermill message UUID of a record (the dedup key's last part). */
function uuidOf(headers: Record<string, unknown> | undefined): string {
  const h = headers?._watermill_message_uuid;
  return Buffer.isBuffer(h) ? h.toString("utf8") : String(h ?? "");
}

/** `raw`: kafkajs `eachBatch` with a no-op (kafkajs' own auto-resolve and auto-commit). */
export function consumeRaw(r: KafkajsRound): Promise<ConsumeFigures> {
  return consumeWith(r, (consumer, clock) =>
    consumer.run({
      partitionsConsumedConcurrently: r.concurrency,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) void m; // the no-op handler, once per message
        clock.seen(batch.messages.length);
      },
    }),
  );
}

/** `floor`: eachBatch + one pipelined `SET key 1 NX PX ttl` per message, the pipeline awaited per batch; keys under `prefix`. */
export function consumeFloor(r: KafkajsRound, redis: Redis, prefix: string): Promise<ConsumeFigures> {
  return consumeWith(r, (consumer, clock) =>
    consumer.run({
      partitionsConsumedConcurrently: r.concurrency,
      eachBatch: async ({ batch }) => {
        const p = redis.pipeline();
        for (const m of batch.messages) p.set(prefix + uuidOf(m.headers), "1", "PX", REF_TTL_MS, "NX");
        await p.exec();
        clock.seen(batch.messages.length);
      },
    }),
  );
}

/** `naive`: eachMessage + an awaited `SET key 1 PX ttl NX` per message, all `partitions` at once; keys under `prefix`. */
export function consumeNaive(
  r: KafkajsRound,
  redis: Redis,
  prefix: string,
  partitions: number,
): Promise<ConsumeFigures> {
  return consumeWith(r, (consumer, clock) =>
    consumer.run({
      partitionsConsumedConcurrently: partitions,
      eachMessage: async ({ message }) => {
        await redis.set(prefix + uuidOf(message.headers), "1", "PX", REF_TTL_MS, "NX");
        clock.seen(1);
      },
    }),
  );
}
