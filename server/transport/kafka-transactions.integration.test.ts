/**
 * On real Kafka: the Kafka-transactions mode of a `KafkaSubscriber`. A Kafka-to-Kafka handler that
 * fails once in the middle of a chunk (after earlier messages of that chunk already sent their
 * outputs into its transaction): the transaction is aborted and the chunk runs again, so a
 * `read_committed` reader (kcat) counts each output exactly once, while a `read_uncommitted` reader
 * also sees the aborted sends; the group's offsets were committed in the transactions, so a
 * restarted handler produces nothing more. And the fencing of a partition's previous owner.
 */
import { Kafka, logLevel } from "kafkajs";
import { describe, expect, it } from "vitest";
import { newMessage, payloadText, Router } from "@/server/dedup";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { kcatHeaderValues } from "@/server/testing/kcat";
import { ownKafka, until } from "@/server/testing/own-kafka";
import { KafkaSubscriber } from "./kafka-subscriber";
import { type ChunkBegin, KafkaTransactionalPublisher, PartitionTransactions } from "./kafka-transactions";

const k = ownKafka();
const N = 40;

/** Runs the output handler on `input` in transactions mode until `done()`; `fail(uuid)` makes one delivery throw. */
async function runHandler(
  input: string,
  output: string,
  groupId: string,
  fail: (uuid: string) => boolean,
  done: () => Promise<boolean>,
) {
  const sub = new KafkaSubscriber({ brokers: k.brokers, groupId, chunkSize: 10, nackDelayMs: 50, transactions: true });
  const router = new Router({ onError: () => undefined });
  router.addHandler({
    name: "confirm",
    topic: input,
    subscriber: sub,
    publisher: sub.transactionalPublisher,
    publishTopic: output,
    handler: async (msg) => {
      const out = newMessage(`out-${msg.uuid}`, `confirmed ${payloadText(msg)}`);
      if (fail(msg.uuid)) throw new Error("injected failure after the chunk's earlier outputs were sent");
      return [out];
    },
  });
  void router.run();
  await router.running;
  try {
    await until(done, 60_000, "the outputs");
  } finally {
    await router.close();
  }
}

describe("Kafka-transactions mode", () => {
  it(`${N} inputs, one failure mid-chunk: read_committed counts each output once, read_uncommitted shows the aborted sends; a restart produces nothing more`, async () => {
    const {
      id,
      names: [input, output],
    } = await k.topics("txmode", { "": 2, ".out": 1 });
    const groupId = k.group("txmode");
    const brokers = k.brokers.join(",");
    const uuids = Array.from({ length: N }, (_, i) => `${id}-${String(i).padStart(2, "0")}`);
    // All on one partition's key so the failing one (the 6th) sits mid-chunk behind 5 sent outputs.
    await k.kafka.publisher.publish(
      input!,
      ...uuids.map((u, i) => ({ ...newMessage(u, `order ${i}`), key: Buffer.from("k") })),
    );
    const committed = async () =>
      (await kcatHeaderValues(brokers, output!, WATERMILL_UUID_HEADER, "read_committed")).length;
    let failed = false;
    await runHandler(
      input!,
      output!,
      groupId,
      (u) => {
        if (failed || u !== uuids[5]) return false;
        failed = true;
        return true;
      },
      async () => (await committed()) >= N,
    );
    expect(failed).toBe(true);
    const readCommitted = await kcatHeaderValues(brokers, output!, WATERMILL_UUID_HEADER, "read_committed");
    expect(readCommitted.sort()).toEqual(uuids.map((u) => `out-${u}`).sort());
    // The aborted transaction's 5 sends are in the log, hidden from read_committed only.
    const uncommitted = await kcatHeaderValues(brokers, output!, WATERMILL_UUID_HEADER, "read_uncommitted");
    expect(uncommitted.length).toBe(N + 5);

    // The offsets committed with the outputs: a second run of the group reads nothing again.
    await runHandler(
      input!,
      output!,
      groupId,
      () => false,
      async () => {
        await new Promise((r) => setTimeout(r, 4000));
        return true;
      },
    );
    expect(await committed()).toBe(N);
  }, 120_000);

  it("a partition's next owner fences the previous one: the old owner's commit fails, its output stays invisible, and its next chunk skips what the new owner committed", async () => {
    const {
      names: [input, output],
    } = await k.topics("txfence", { "": 1, ".out": 1 });
    const groupId = k.group("txfence");
    const kafka = new Kafka({ clientId: "txfence", brokers: [...k.brokers], logLevel: logLevel.NOTHING });
    const old = new PartitionTransactions(kafka, groupId, input!, {});
    const next = new PartitionTransactions(kafka, groupId, input!, {});
    const pub = new KafkaTransactionalPublisher();
    const tx = (b: ChunkBegin) => {
      if (!("tx" in b)) throw new Error(`expected a transaction, got a skip to ${b.committedAt}`);
      return b.tx;
    };
    try {
      const a = tx(await old.begin(0, "0"));
      await a.run(() => pub.publish(output!, newMessage("from-the-old-owner", "a")));
      // The rebalance gave partition 0 to `next`: its producer (same transactional id) fences `old`.
      const b = tx(await next.begin(0, "0"));
      await b.run(() => pub.publish(output!, newMessage("from-the-next-owner", "b")));
      await b.commit("10");
      await expect(a.commit("5")).rejects.toThrow();
      const seen = await kcatHeaderValues(k.brokers.join(","), output!, WATERMILL_UUID_HEADER, "read_committed");
      expect(seen).toEqual(["from-the-next-owner"]);
      // The old owner, still reading partition 0 before it notices the rebalance: its new producer
      // re-reads the committed offset and skips what the next owner committed.
      expect(await old.begin(0, "5")).toEqual({ committedAt: "10" });
    } finally {
      await old.close();
      await next.close();
    }
  }, 60_000);
});
