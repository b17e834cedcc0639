/**
 * Consumer-group lag as exported on /api/metrics against the real broker's admin API at the same
 * moment: per partition, kafka_consumergroup_lag = high watermark − max(committed, log start). A
 * commit that retention passed (records deleted with DeleteRecords, as retention does) shows only
 * the records still in the log, not a phantom lag; a partition never committed shows −1 as its
 * offset and the whole retained log as lag. Needs `npm run stack:up` (Kafka).
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { createTopicsReady } from "@/server/transport/topics";
import { ConsumerGroupDescriber } from "../kafka/consumer-group";
import { LagMetrics } from "./lag-metrics";

const tag = randomBytes(4).toString("hex");
const topic = `lag-${tag}`;
const group = `lag-${tag}`;
let admin: Admin;

/** The gauge's value per label set, keyed `group/partition`. */
async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const m = await registry.getSingleMetric(name)!.get();
  return Object.fromEntries(
    m.values.map((v) => [`${v.labels.consumergroup ?? ""}/${v.labels.partition ?? ""}`, v.value]),
  );
}

beforeAll(async () => {
  admin = new Kafka({ clientId: `lag-${tag}`, brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await createTopicsReady(admin, [{ name: topic, partitions: 3 }]);
  const producer = new Kafka({
    clientId: `lag-p-${tag}`,
    brokers: ["127.0.0.1:9092"],
    logLevel: logLevel.NOTHING,
  }).producer();
  await producer.connect();
  for (const partition of [0, 1, 2])
    await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ partition, value: String(i) })) });
  await producer.disconnect();
  // The group committed 3 on partition 0 and 4 on partition 1, nothing on partition 2 (no member: admin may set it).
  await admin.setOffsets({
    groupId: group,
    topic,
    partitions: [
      { partition: 0, offset: "3" },
      { partition: 1, offset: "4" },
    ],
  });
  // Retention passes the commit of partition 0: records before offset 8 are deleted.
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: "8" }] });
}, 60_000);

afterAll(async () => {
  await admin?.deleteGroups([group]).catch(() => {});
  await admin?.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin?.disconnect();
});

describe("kafka_consumergroup_lag against the admin API", () => {
  it("equals high − max(committed, log start) per partition, with the retention clamp and never-committed partitions", async () => {
    const registry = new Registry();
    const describer = new ConsumerGroupDescriber(admin);
    new LagMetrics(
      registry,
      () => [topic],
      (t) => describer.read({ topic: t, group }),
    );
    const lag = await values(registry, KAFKA_METRIC_NAMES.lag);
    const offsets = await values(registry, KAFKA_METRIC_NAMES.currentOffset);
    const oldest = await values(registry, KAFKA_METRIC_NAMES.topicOldestOffset);

    // The admin API at the same moment.
    const ends = await admin.fetchTopicOffsets(topic);
    const committed = (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions;
    const expected: Record<string, number> = {};
    for (const e of ends) {
      const c = Number(committed.find((p) => p.partition === e.partition)!.offset);
      expected[`${group}/${e.partition}`] = Number(e.high) - Math.max(c < 0 ? Number(e.low) : c, Number(e.low));
    }
    expect(lag).toEqual(expected);
    // In figures: the commit at 3 behind the log start 8 lags 2 (not the phantom 7); 10 − 4 = 6; never committed = 10.
    expect(lag).toEqual({ [`${group}/0`]: 2, [`${group}/1`]: 6, [`${group}/2`]: 10 });
    expect(offsets).toEqual({ [`${group}/0`]: 3, [`${group}/1`]: 4, [`${group}/2`]: -1 });
    expect(oldest).toEqual({ "/0": 8, "/1": 0, "/2": 0 });
    expect((await values(registry, KAFKA_METRIC_NAMES.lagSum))[`${group}/`]).toBe(18);
  });
});
