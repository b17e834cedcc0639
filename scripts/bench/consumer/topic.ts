/**
 * The topic `bench:consumer` consumes: records in Watermill's wire format (`_watermill_message_uuid`
 * = a ULID, a JSON payload of about `size` bytes), produced fast and spread evenly over the partitions.
 */
import { randomBytes } from "node:crypto";
import { Partitioners, type Kafka } from "kafkajs";
import { encodeTime } from "ulid";
import { encodeRecord } from "@/server/transport/watermill-codec";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * Unique ULIDs fast: the time part, 6 random characters drawn once, and a 10-character counter.
 * (`ulid()` draws 16 random characters per id through `randomFillSync`, which made filling the
 * topic the slowest part of the bench.)
 */
export function ulidSource(): () => string {
  const time = encodeTime(Date.now(), 10);
  const salt = Array.from(randomBytes(6), (b) => CROCKFORD[b & 31]).join("");
  let n = 0;
  return () => {
    let c = n++;
    let tail = "";
    for (let i = 0; i < 10; i++) {
      tail = CROCKFORD[c & 31] + tail;
      c = Math.floor(c / 32);
    }
    return time + salt + tail;
  };
}

type Outgoing = { value: Buffer; headers: Record<string, string>; partition: number };

/** Records `start` … `end − 1`, grouped by partition (record i goes to partition i mod `partitions`). */
function records(
  start: number,
  end: number,
  partitions: number,
  pad: string,
  nextId: () => string,
): { messages: Outgoing[]; bytes: number } {
  const byPartition = Array.from({ length: partitions }, () => [] as Outgoing[]);
  let bytes = 0;
  for (let i = start; i < end; i++) {
    const payload = Buffer.from(
      JSON.stringify({ type: "order.created", order: `o-${i}`, amount: i % 997, at: new Date().toISOString(), pad }),
    );
    bytes += payload.length;
    const rec = encodeRecord({
      uuid: nextId(),
      metadata: { "Correlation-Id": `c-${i}`, "Event-Type": "order.created" },
      payload,
    });
    byPartition[i % partitions]!.push({ value: rec.value, headers: rec.headers, partition: i % partitions });
  }
  return { messages: byPartition.flat(), bytes };
}

/** Produces `n` records of about `size` bytes of payload to `topic` (4 batches of 2000 in flight); answers the mean payload size. */
export async function fillTopic(
  kafka: Kafka,
  topic: string,
  n: number,
  partitions: number,
  size: number,
): Promise<number> {
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const pad = "x".repeat(Math.max(0, size - 96));
  const nextId = ulidSource();
  const BATCH = 2000;
  const IN_FLIGHT = 4;
  let next = 0;
  let bytes = 0;
  try {
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let start = next; start < n; start = next) {
          next = start + BATCH;
          const batch = records(start, Math.min(n, start + BATCH), partitions, pad, nextId);
          bytes += batch.bytes;
          await producer.sendBatch({ acks: 1, topicMessages: [{ topic, messages: batch.messages }] });
        }
      }),
    );
  } finally {
    await producer.disconnect();
  }
  return bytes / n;
}
