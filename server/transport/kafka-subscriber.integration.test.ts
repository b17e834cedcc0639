import { randomBytes } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { ulid } from "ulid";
import { afterAll, describe, expect, it } from "vitest";
import { newMessage, payloadText } from "@/server/dedup";
import { oneHandlerRouter } from "@/server/testing/one-handler-router";
import { KafkaPublisher } from "./kafka-publisher";
import { KafkaSubscriber } from "./kafka-subscriber";
import { createTopicsReady } from "./topics";

/** The delivery contract on a real broker: nack → redelivery in order, commits only of acked offsets, commit on stop. */
const brokers = ["127.0.0.1:9092"];
const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
const topics: string[] = [];
const groups: string[] = [];
const publisher = new KafkaPublisher({ brokers });

async function freshTopic(partitions = 1): Promise<string> {
  const t = `subtest.${randomBytes(4).toString("hex")}`;
  await admin.connect();
  await createTopicsReady(admin, [{ name: t, partitions }]);
  topics.push(t);
  return t;
}
/** A fresh topic holding `count` messages (payloads "0", "1", …, one send) and a fresh group id. */
async function seeded(partitions: number, count: number): Promise<{ topic: string; groupId: string }> {
  const topic = await freshTopic(partitions);
  const groupId = `g-${randomBytes(3).toString("hex")}`;
  groups.push(groupId);
  await publisher.publish(topic, ...Array.from({ length: count }, (_, i) => newMessage(ulid(), String(i))));
  return { topic, groupId };
}
async function committed(groupId: string, topic: string): Promise<string[]> {
  const [r] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return r!.partitions.sort((a, b) => a.partition - b.partition).map((p) => p.offset);
}
/** The group's committed offsets once they are `want`, or as they are after 10 s. */
async function committedOnce(groupId: string, topic: string, want: string[]): Promise<string[]> {
  const end = Date.now() + 10_000;
  let got = await committed(groupId, topic);
  while (got.join() !== want.join() && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    got = await committed(groupId, topic);
  }
  return got;
}
const until = async (cond: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
};

afterAll(async () => {
  await publisher.close();
  await admin.deleteGroups(groups).catch(() => undefined);
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
});

describe("KafkaSubscriber", () => {
  it("a nack is redelivered before the later messages of its partition, and only acked offsets are committed", async () => {
    const { topic, groupId } = await seeded(1, 10);
    const seen: string[] = [];
    let failures = 0;
    let offsetsWhileFailing: string[] = [];
    const sub = new KafkaSubscriber({ brokers, groupId, chunkSize: 4, nackDelayMs: 100 });
    const router = oneHandlerRouter({
      topic,
      subscriber: sub,
      handler: async (msg) => {
        const i = payloadText(msg);
        seen.push(i);
        if (i === "5" && failures < 2) {
          failures++;
          if (failures === 2) offsetsWhileFailing = await committed(groupId, topic);
          throw new Error("transient");
        }
      },
    });
    void router.run();
    await router.running;
    await until(() => seen.filter((x) => x === "9").length === 1);
    expect(seen).toEqual(["0", "1", "2", "3", "4", "5", "5", "5", "6", "7", "8", "9"]);
    // While message 5 failed, offsets up to 4 were committed and nothing from 5 on (next offset = 5).
    expect(offsetsWhileFailing).toEqual(["5"]);
    await router.close();
    expect(await committed(groupId, topic)).toEqual(["10"]);
  }, 60_000);

  it("commitIntervalMs 0: offsets are committed once per fetched batch (not per chunk), and all of them by the end", async () => {
    // Published in one send before the group starts: one record batch, fetched at once (≈ 40 KB < 1 MB).
    const { topic, groupId } = await seeded(1, 400);
    let midBatch: string[] = [];
    let n = 0;
    const sub = new KafkaSubscriber({ brokers, groupId, chunkSize: 100 });
    const router = oneHandlerRouter({
      topic,
      subscriber: sub,
      handler: async (msg) => {
        n++;
        if (payloadText(msg) === "250") midBatch = await committed(groupId, topic);
      },
    });
    void router.run();
    await router.running;
    await until(() => n === 400);
    // Two chunks of the batch were acked before message 250, but none committed yet (per chunk: "200").
    expect(midBatch).toEqual(["-1"]);
    expect(await committedOnce(groupId, topic, ["400"])).toEqual(["400"]); // committed at the batch's end, before the stop
    await router.close();
  }, 60_000);

  it("a batch's deferred writes land before its offsets are committed: the commit waits for sink.flush()", async () => {
    const { topic, groupId } = await seeded(1, 50);
    // A sink like the Router's: every batch acks at once and leaves its `done` marks in the air
    // until the test lets them land.
    let land!: () => void;
    const marks = new Promise<void>((r) => (land = r));
    let delivered = 0;
    let flushes = 0;
    const sink = {
      deliver: async () => "ack" as const,
      deliverBatch: async (msgs: readonly unknown[]) => {
        delivered += msgs.length;
        return msgs.map(() => "ack" as const);
      },
      flush: () => {
        flushes++;
        return marks;
      },
    };
    const sub = new KafkaSubscriber({ brokers, groupId, chunkSize: 10 });
    const stop = new AbortController();
    const subscription = await sub.subscribe(topic, sink, stop.signal);
    await until(() => delivered === 50 && flushes > 0);
    await new Promise((r) => setTimeout(r, 500));
    expect(await committed(groupId, topic)).toEqual(["-1"]); // acked, marks not landed: nothing committed
    land();
    expect(await committedOnce(groupId, topic, ["50"])).toEqual(["50"]);
    stop.abort();
    await subscription.closed;
    await sub.close();
  }, 60_000);

  it("with an interval commit, a graceful stop commits what was acked; a crash before commit leaves it to the next owner", async () => {
    const { topic, groupId } = await seeded(2, 8);
    const run = async (opts: { crash: boolean }) => {
      let n = 0;
      const sub = new KafkaSubscriber({
        brokers,
        groupId,
        commitIntervalMs: 60_000,
        beforeCommit: () => (opts.crash ? "crash" : "commit"),
      });
      const router = oneHandlerRouter({ topic, subscriber: sub, handler: async () => void n++ });
      void router.run();
      await router.running;
      await until(() => (opts.crash ? sub.crashed : n === 8));
      await router.close();
      return n;
    };
    expect(await run({ crash: true })).toBeGreaterThan(0);
    expect((await committed(groupId, topic)).every((o) => o === "-1")).toBe(true);
    expect(await run({ crash: false })).toBe(8); // the successor re-reads everything
    expect((await committed(groupId, topic)).map(Number).reduce((a, b) => a + b, 0)).toBe(8);
  }, 60_000);
});
