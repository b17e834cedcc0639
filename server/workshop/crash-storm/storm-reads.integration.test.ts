/**
 * On real Kafka: the crash storm's read_committed reader against `kcat -X isolation.level=
 * read_committed`, on a log a crashed consumer's partitions leave behind — two producers'
 * transactions aborted in the other order than they began, one committed, one record outside any
 * transaction. kafkajs's own read_committed consumer lets the earlier aborted transaction through.
 */
import { Kafka, logLevel, type Producer } from "kafkajs";
import { describe, expect, it } from "vitest";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { kcatHeaderValues } from "@/server/testing/kcat";
import { ownKafka, until } from "@/server/testing/own-kafka";
import { stormReads } from "./storm-reads";

const k = ownKafka();
const record = (uuid: string) => ({ value: uuid, headers: { [WATERMILL_UUID_HEADER]: uuid } });

describe("the crash storm's read_committed reader", () => {
  it("counts what kcat's read_committed reads, where kafkajs's consumer shows a record of an aborted transaction", async () => {
    const {
      names: [topic],
    } = await k.topics("storm-reads", { "": 1 });
    const kafka = new Kafka({ clientId: "storm-reads-test", brokers: [...k.brokers], logLevel: logLevel.NOTHING });
    const tx = (id: string) =>
      kafka.producer({ transactionalId: `${topic}.${id}`, idempotent: true, maxInFlightRequests: 1 });
    const [a, b, c, plain] = [tx("a"), tx("b"), tx("c"), kafka.producer()];
    const producers: Producer[] = [a, b, c, plain];
    try {
      await Promise.all(producers.map((p) => p.connect()));
      const ta = await a.transaction();
      await ta.send({ topic: topic!, messages: [record("a1")] });
      const tb = await b.transaction();
      await tb.send({ topic: topic!, messages: [record("b1")] });
      await tb.abort(); // the later one ends first …
      await ta.send({ topic: topic!, messages: [record("a2")] });
      await ta.abort(); // … so the broker lists b's before a's
      const tc = await c.transaction();
      await tc.send({ topic: topic!, messages: [record("c1"), record("c2")] });
      await tc.commit();
      await plain.send({ topic: topic!, messages: [record("plain")] });
    } finally {
      await Promise.all(producers.map((p) => p.disconnect().catch(() => undefined)));
    }

    const kcat = await kcatHeaderValues(k.brokers.join(","), topic!, WATERMILL_UUID_HEADER, "read_committed");
    expect(kcat.sort()).toEqual(["c1", "c2", "plain"]);
    const reads = stormReads(k.kafka);
    try {
      expect((await reads.committedUuids(topic!)).sort()).toEqual(kcat);
    } finally {
      await reads.close();
    }

    // Why the reader resolves markers itself: kafkajs 2.2.4's read_committed consumer on the same log.
    const seen: string[] = [];
    const groupId = k.group("storm-reads-kafkajs");
    const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 200 });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: topic!, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(String(message.value)) });
      await until(() => seen.includes("plain"), 20_000, "kafkajs's consumer to read the log");
    } finally {
      await consumer.disconnect();
    }
    expect(seen).toContain("a1");
  }, 60_000);
});
