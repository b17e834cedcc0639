/**
 * Poison input on the topic — a record without the UUID header, a UUID header
 * that is not UTF-8 (or empty), invalid JSON, a 1 MB binary payload — each goes to the DLQ with a
 * reason, and the consumer keeps consuming: every good message around them is pushed once. A
 * non-UTF-8 value in another header does not poison a message (the codec drops that one header).
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { freePort } from "./lib/procs";
import { FAULT_BROKERS } from "./lib/kafka";
import { KafkaCase } from "./lib/cases";
import { counterValue, readDlq, report, startWorker, waitUntil, WORKER_DEFAULTS, type Worker } from "./lib/stream";

const H = "on-review-created";
const json = (o: unknown) => Buffer.from(JSON.stringify(o));

interface Poison {
  name: string;
  headers: Record<string, string | Buffer>;
  value: Buffer;
  /** Expected DLQ reason. */
  reason: RegExp;
}

describe("case 5: poison input goes to the DLQ with a reason; consumption continues", () => {
  const fault = new KafkaCase("poison", { partitions: 3, handlers: [H] });
  const { id, topic, dlqTopic, ledger } = fault;
  let worker: Worker | undefined;

  fault.hooks(async () => worker?.stop());

  it("DLQs each poison with its reason and pushes every good message once", async () => {
    const t0 = Date.now();
    const metricsPort = await freePort();
    worker = startWorker({
      ...WORKER_DEFAULTS,
      replica: `poison-${id}`,
      redisUrl: fault.redis.url,
      schema: ledger.schema,
      topic,
      dlqTopic,
      metricsPort,
      handlers: [{ name: H, mode: "open", groupId: `faults.${id}` }],
    });
    await worker.ready;

    const good = () => {
      const uuid = ulid();
      return {
        uuid,
        headers: { [WATERMILL_UUID_HEADER]: uuid, "Event-Type": "review.created" } as Record<string, string | Buffer>,
        value: json({ ok: true, uuid }),
      };
    };
    const goods = Array.from({ length: 60 }, good);
    const poisonUuids = { json: ulid(), big: ulid() };
    const poisons: Poison[] = [
      {
        name: "no-uuid",
        headers: { "Event-Type": "review.created" },
        value: json({ x: 1 }),
        reason: /marshal: no _watermill_message_uuid header/,
      },
      {
        name: "uuid-not-utf8",
        headers: { [WATERMILL_UUID_HEADER]: Buffer.from([0xff, 0xfe, 0xc3, 0x28]) },
        value: json({ x: 2 }),
        reason: /marshal: unreadable _watermill_message_uuid/,
      },
      {
        name: "uuid-empty",
        headers: { [WATERMILL_UUID_HEADER]: "" },
        value: json({ x: 3 }),
        reason: /marshal: unreadable _watermill_message_uuid/,
      },
      {
        name: "invalid-json",
        headers: { [WATERMILL_UUID_HEADER]: poisonUuids.json },
        value: Buffer.from("{not json"),
        reason: /invalid JSON payload/,
      },
      {
        name: "1mb-binary",
        headers: { [WATERMILL_UUID_HEADER]: poisonUuids.big },
        value: randomBytes(1024 * 1024),
        reason: /invalid JSON payload/,
      },
    ];
    // A good message whose other header is not UTF-8: processed, that header dropped.
    const oddHeader = good();
    oddHeader.headers["X-Binary"] = Buffer.from([0xff, 0xff, 0xfe]);

    const producer = new Kafka({
      clientId: `faults-poison-${id}`,
      brokers: FAULT_BROKERS,
      logLevel: logLevel.NOTHING,
    }).producer();
    await producer.connect();
    try {
      const rec = (r: { headers: Record<string, string | Buffer>; value: Buffer }, caseName?: string) => ({
        value: r.value,
        headers: caseName ? { ...r.headers, "X-Case": caseName } : r.headers,
        partition: 0,
      });
      // All on one partition, poison between good messages: consumption must get past each one.
      const messages = [
        ...goods.slice(0, 20).map((g) => rec(g)),
        ...poisons.flatMap((p, i) => [rec(p, p.name), ...goods.slice(20 + i * 8, 28 + i * 8).map((g) => rec(g))]),
        rec(oddHeader),
      ];
      for (const m of messages) await producer.send({ topic, acks: -1, messages: [m] });
    } finally {
      await producer.disconnect();
    }

    const expectedGood = goods.length + 1;
    expect(await waitUntil(async () => (await ledger.count(H)) >= expectedGood, 120_000, 500)).toBe(true);
    expect(await waitUntil(async () => (await readDlq(dlqTopic)).length >= poisons.length, 60_000, 1000)).toBe(true);
    const dlq = await readDlq(dlqTopic);
    const pushed = await ledger.read(H);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    const marshal = counterValue(metrics, "deduplication_errors_total", { reason: "marshal" });
    report({
      case: "5 poison input",
      published: goods.length + 1 + poisons.length,
      processed: pushed.ids.size,
      lost: [...goods, oddHeader].filter((g) => !pushed.ids.has(g.uuid)).length,
      duplicateSideEffects: pushed.duplicates,
      dlq: dlq.length,
      seconds: (Date.now() - t0) / 1000,
      note: `DLQ reasons: ${dlq.map((d) => `${d.metadata["X-Case"]}=${d.reason.slice(0, 48).replace(/[^\x20-\x7e]/g, "?")}`).join(" | ")}; marshal errors ${marshal}`,
    });

    for (const g of [...goods, oddHeader])
      expect(pushed.ids.has(g.uuid), `good message ${g.uuid} not pushed`).toBe(true);
    expect(pushed.duplicates).toBe(0);
    expect(pushed.ids.has(poisonUuids.json)).toBe(false);
    expect(pushed.ids.has(poisonUuids.big)).toBe(false);
    expect(dlq).toHaveLength(poisons.length);
    for (const p of poisons) {
      const d = dlq.find((x) => x.metadata["X-Case"] === p.name);
      expect(d, `${p.name} is not in the DLQ`).toBeDefined();
      expect(d!.reason, p.name).toMatch(p.reason);
      expect(d!.metadata.topic_poisoned).toBe(topic);
      expect(d!.bytes).toBe(p.value.length);
    }
    // The DLQ copies of the unreadable ones carry no invented UUID.
    expect(
      dlq
        .filter((d) => d.uuid === null)
        .map((d) => d.metadata["X-Case"])
        .sort(),
    ).toEqual(["no-uuid", "uuid-empty", "uuid-not-utf8"]);
    expect(marshal).toBe(3);
    expect(worker.alive()).toBe(true);
  });
});
