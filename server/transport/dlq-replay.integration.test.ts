import { randomBytes } from "node:crypto";
import { ulid } from "ulid";
import { afterAll, describe, expect, it } from "vitest";
import {
  HANDLER_POISONED_KEY,
  POISON_KEYS,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { NO_UUID_WHY } from "./dlq-redrive";
import { replayDlq } from "./dlq-replay";
import { KafkaTransport, MemoryTransport, type Transport } from "./index";

/** DLQ replay on Kafka and on the embedded broker: same UUIDs and metadata back on the origin topic, bounded, idempotent. */
const kafka = new KafkaTransport(["127.0.0.1:9092"]);
const topics: string[] = [];
afterAll(async () => {
  await kafka.deleteTopics(topics);
  await kafka.close();
});

async function scenario(t: Transport) {
  const id = randomBytes(4).toString("hex");
  const topic = `replaytest.${id}`;
  const dlq = `${topic}.dlq`;
  topics.push(topic, dlq);
  await t.createTopics([
    { name: topic, partitions: 2 },
    { name: dlq, partitions: 1 },
  ]);
  const uuids = [ulid(), ulid(), ulid()];
  const poison = {
    [REASON_POISONED_KEY]: "boom",
    [TOPIC_POISONED_KEY]: topic,
    [HANDLER_POISONED_KEY]: "h",
    [SUBSCRIBER_POISONED_KEY]: "kafka/r1",
  };
  for (const u of uuids)
    await t.produceRaw(dlq, {
      headers: { [WATERMILL_UUID_HEADER]: u, "Event-Type": "review.created", "Correlation-Id": `c-${u}`, ...poison },
      value: Buffer.from(`{"u":"${u}"}`),
    });
  await t.produceRaw(dlq, {
    headers: { ...poison, [REASON_POISONED_KEY]: "marshal: no _watermill_message_uuid header" },
    value: Buffer.from("x"),
  });
  // A DLQ record naming a topic outside the allow-list is not sent there.
  await t.produceRaw(dlq, {
    headers: { [WATERMILL_UUID_HEADER]: ulid(), ...poison, [TOPIC_POISONED_KEY]: "__consumer_offsets" },
    value: Buffer.from("{}"),
  });
  const groupId = `${dlq}.replay`;
  const allowTopics = [topic];
  const first = await replayDlq(t, dlq, { groupId, allowTopics, idleMs: t.mode === "real" ? 2500 : 300 });
  expect(first).toMatchObject({ replayed: 3, skipped: 2, byTopic: { [topic]: 3 } });
  expect(first.skippedWhy).toEqual({
    [NO_UUID_WHY]: 1,
    "topic_poisoned __consumer_offsets is not one of the allowed consumer topics (CONSUMER_TOPICS)": 1,
  });
  const back = await t.readAll(topic);
  expect(back.map((d) => (d.ok ? d.uuid : null)).sort()).toEqual([...uuids].sort());
  for (const d of back) {
    for (const k of POISON_KEYS) expect(d.metadata[k]).toBeUndefined();
    expect(d.metadata["Event-Type"]).toBe("review.created");
    expect(d.ok && d.metadata["Correlation-Id"]).toBe(d.ok ? `c-${d.uuid}` : false);
  }
  const second = await replayDlq(t, dlq, { groupId, allowTopics, idleMs: t.mode === "real" ? 2500 : 300 });
  expect(second.replayed).toBe(0);
  expect(await t.readAll(topic)).toHaveLength(3);
  // Bounded: with max 1, one message per run; the rest waits for the next run.
  await t.produceRaw(dlq, { headers: { [WATERMILL_UUID_HEADER]: ulid(), ...poison }, value: Buffer.from("{}") });
  await t.produceRaw(dlq, { headers: { [WATERMILL_UUID_HEADER]: ulid(), ...poison }, value: Buffer.from("{}") });
  expect(
    (await replayDlq(t, dlq, { groupId, allowTopics, max: 1, idleMs: t.mode === "real" ? 2500 : 300 })).replayed,
  ).toBe(1);
  expect(
    (await replayDlq(t, dlq, { groupId, allowTopics, max: 5, idleMs: t.mode === "real" ? 2500 : 300 })).replayed,
  ).toBe(1);
}

describe("replayDlq", () => {
  it("on Kafka: republishes with the same UUID minus poison keys, skips records without a UUID or with a topic outside the allow-list, replays nothing twice", async () => {
    await scenario(kafka);
    await kafka.deleteGroups(topics.filter((x) => x.endsWith(".dlq")).map((d) => `${d}.replay`));
  }, 90_000);

  it("on the embedded broker: the same", async () => {
    await scenario(new MemoryTransport());
  });
});
