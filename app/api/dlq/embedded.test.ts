/**
 * The message view, the UUID lookup, the DLQ list and the re-drive in embedded mode: the routes read
 * the embedded broker the runtime registers (no `KAFKA_BROKERS`), with the answers and bounds they
 * have over Kafka.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dlqResponseSchema, redriveResponseSchema } from "@/lib/api/dlq";
import { recordsResponseSchema } from "@/lib/api/records";
import { DEMO_TOPIC } from "@/names/product";
import { HANDLER_POISONED_KEY, REASON_POISONED_KEY, SUBSCRIBER_POISONED_KEY, TOPIC_POISONED_KEY } from "@/names/dedup";
import { dlqTopicOf } from "@/names/dlq";
import { embeddedLog, registerEmbeddedLog } from "@/server/observe/records/memory-reader";
import { RECORD_SCAN_LIMITS } from "@/server/observe/records/scan";
import { consumerRuntime } from "@/server/runtime";
import { embeddedConfigPerTest, LOCAL_REQUEST_HEADERS } from "@/server/testing/app-config";
import { MemoryBroker } from "@/server/transport/memory-broker";
import { decodeRecord } from "@/server/transport/watermill-codec";
import { GET as getRecords } from "../records/route";
import { GET as getDlq } from "./route";
import { POST as postRedrive } from "./redrive/route";

embeddedConfigPerTest();
afterEach(() => registerEmbeddedLog(null));

const DLQ = dlqTopicOf(DEMO_TOPIC);
const get = async (handler: (r: Request) => Promise<Response>, path: string) => {
  const res = await handler(new Request(`http://localhost${path}`));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const redrive = async (body: unknown) => {
  const res = await postRedrive(
    new Request("http://localhost/api/dlq/redrive", {
      method: "POST",
      headers: { ...LOCAL_REQUEST_HEADERS, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return redriveResponseSchema.parse(await res.json());
};

/** A broker holding the demo's topics: two events and, in the DLQ, a handler error and a record without UUID. */
async function demoBroker(): Promise<MemoryBroker> {
  const b = new MemoryBroker();
  b.createTopic(DEMO_TOPIC, 3);
  b.createTopic(DLQ, 1);
  registerEmbeddedLog(b);
  const pub = b.publisher();
  const signal = new AbortController().signal;
  await pub.publish(DEMO_TOPIC, {
    uuid: "u-1",
    metadata: { "Event-Type": "review.created" },
    payload: Buffer.from('{"a":1}'),
    signal,
    context: {},
  });
  await pub.publish(DEMO_TOPIC, {
    uuid: "u-2",
    metadata: { "Event-Type": "review.created" },
    payload: Buffer.from([0xff, 0x00]),
    signal,
    context: {},
  });
  const poison = {
    [TOPIC_POISONED_KEY]: DEMO_TOPIC,
    [HANDLER_POISONED_KEY]: "on-review-created",
    [SUBSCRIBER_POISONED_KEY]: "memory/r1",
  };
  await pub.publish(DLQ, {
    uuid: "u-bad",
    metadata: { ...poison, [REASON_POISONED_KEY]: "push provider: 500", "Event-Type": "review.created" },
    payload: Buffer.from('{"bad":1}'),
    signal,
    context: {},
  });
  b.produce(DLQ, {
    headers: { ...poison, [REASON_POISONED_KEY]: "marshal: no _watermill_message_uuid header" },
    value: Buffer.from("{}"),
  });
  return b;
}

describe("records and the DLQ over the embedded broker", () => {
  it("the runtime registers its embedded broker for the record routes, and forgets it when closed", async () => {
    const rt = consumerRuntime();
    expect(embeddedLog()).toBeDefined();
    await rt.close();
    expect(embeddedLog()).toBeUndefined();
  });

  it("a DLQ topic nobody has poisoned into yet is an empty DLQ (200, no entries), not an error", async () => {
    const b = new MemoryBroker();
    b.createTopic(DEMO_TOPIC, 3);
    registerEmbeddedLog(b);
    const { status, body } = await get(getDlq, "/api/dlq?limit=10");
    expect(status, JSON.stringify(body)).toBe(200);
    expect(dlqResponseSchema.parse(body).entries).toEqual([]);
  });

  it("opens a record by position and finds it by UUID: payload, headers, UUID and time as over Kafka", async () => {
    const b = await demoBroker();
    expect(b.records(DEMO_TOPIC)).toHaveLength(2); // round robin over 3 partitions: u-1 on 0, u-2 on 1
    const one = recordsResponseSchema.parse(
      (await get(getRecords, `/api/records?topic=${DEMO_TOPIC}&partition=0&offset=0`)).body,
    );
    expect(one.kind === "record" && one.record).toMatchObject({
      topic: DEMO_TOPIC,
      partition: 0,
      offset: "0",
      uuid: "u-1",
      payload: { encoding: "utf-8", text: '{"a":1}' },
      key: null,
    });
    expect(one.kind === "record" && one.record.headers).toContainEqual({
      key: "Event-Type",
      value: { encoding: "utf-8", text: "review.created" },
    });
    const found = recordsResponseSchema.parse(
      (await get(getRecords, `/api/records?topic=${DEMO_TOPIC}&uuid=u-2`)).body,
    );
    expect(found.kind === "search" && found).toMatchObject({
      complete: true,
      limits: { ...RECORD_SCAN_LIMITS },
      records: [
        {
          partition: 1,
          offset: "0",
          payload: { encoding: "base64", text: Buffer.from([0xff, 0x00]).toString("base64") },
        },
      ],
    });
  });

  it("the same 404 and 403 as over Kafka: outside the log, a topic it does not hold, a topic not allowed", async () => {
    await demoBroker();
    expect((await get(getRecords, `/api/records?topic=${DEMO_TOPIC}&partition=0&offset=7`)).status).toBe(404);
    expect((await get(getRecords, `/api/records?topic=${DEMO_TOPIC}&partition=9&offset=0`)).status).toBe(404);
    expect((await get(getRecords, `/api/records?topic=other&partition=0&offset=0`)).status).toBe(403);
    registerEmbeddedLog(new MemoryBroker());
    expect((await get(getRecords, `/api/records?topic=${DEMO_TOPIC}&partition=0&offset=0`)).status).toBe(404);
  });

  it("without Kafka and without an embedded broker: a 503 naming KAFKA_BROKERS", async () => {
    const r = await get(getDlq, "/api/dlq");
    expect(r.status).toBe(503);
    expect(String(r.body.detail)).toMatch(/KAFKA_BROKERS/);
  });

  it("lists the DLQ newest first by reason class, the record without UUID under marshal and not re-drivable", async () => {
    await demoBroker();
    const l = dlqResponseSchema.parse((await get(getDlq, "/api/dlq")).body);
    expect(l.topic).toBe(DLQ);
    expect(l.reasons).toEqual({ marshal: 1, handler_error: 1 });
    expect(l.entries.map((e) => [e.offset, e.uuid, e.reasonClass, e.redrivable])).toEqual([
      ["1", null, "marshal", false],
      ["0", "u-bad", "handler_error", true],
    ]);
    const marshal = dlqResponseSchema.parse((await get(getDlq, "/api/dlq?reason=marshal")).body);
    expect(marshal.entries).toHaveLength(1);
  });

  it("a dry run reports what it would send and publishes nothing; the re-drive appends the record to its topic with the same UUID, poison keys removed", async () => {
    const b = await demoBroker();
    const dry = await redrive({ filter: { reason: "handler_error" }, dryRun: true });
    expect(dry).toMatchObject({ matched: 1, redriven: 0, preview: [{ uuid: "u-bad", topic: DEMO_TOPIC }] });
    expect(b.records(DEMO_TOPIC)).toHaveLength(2);
    const real = await redrive({ uuids: ["u-bad"], dryRun: false });
    expect(real).toMatchObject({ matched: 1, redriven: 1, complete: true });
    const all = b.records(DEMO_TOPIC);
    expect(all).toHaveLength(3);
    const sent = all.map((r) => decodeRecord(r.headers, r.value)).find((d) => d.ok && d.uuid === "u-bad");
    expect(
      sent?.ok && [
        Buffer.from(sent.payload).toString(),
        sent.metadata[REASON_POISONED_KEY],
        sent.metadata["Event-Type"],
      ],
    ).toEqual(['{"bad":1}', undefined, "review.created"]);
  });
});
