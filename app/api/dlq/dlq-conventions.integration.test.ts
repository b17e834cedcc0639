/**
 * The DLQ browser reading records another stack dead-lettered, on the real broker: Spring Kafka's
 * `kafka_dlt-*` headers (text ones published with kcat, the binary partition / offset / timestamp
 * with a plain kafkajs producer, as Spring's producer writes them) and Kafka Connect's
 * `__connect.errors.*`. Each is listed with its original topic and exception, `?reason=marshal`
 * lists the deserialization failures, the record page shows Spring's numbers as numbers, and a
 * Spring record that kept the original message's UUID is re-driven to its original topic with its
 * key (read back with kcat).
 */
import { execFileSync } from "node:child_process";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dlqResponseSchema, redriveResponseSchema, type DlqEntry } from "@/lib/api/dlq";
import { recordsResponseSchema } from "@/lib/api/records";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { CONNECT_ERRORS, SPRING_DLT } from "@/names/dlq-conventions";
import { readDlqBacklog } from "@/server/observe/watchers/dlq-backlog";
import { setRedrivePublisher } from "@/server/observe/records/redrive-publisher";
import { LOCAL_REQUEST_HEADERS, configOfFile, useConfig } from "@/server/testing/app-config";
import { kcatOffsets, kcatProduce } from "@/server/testing/kcat";
import { ownKafka } from "@/server/testing/own-kafka";
import { GET } from "./route";
import { POST } from "./redrive/route";
import { GET as getRecords } from "../records/route";

const own = ownKafka();
configOfFile();
const BROKERS = own.brokers.join(",");
let topic: string;
let dlq: string;
let producer: Producer;

const list = async (q: string) =>
  dlqResponseSchema.parse(
    await (await GET(new Request(`http://localhost/api/dlq?topic=${dlq}&state=any&limit=200&${q}`))).json(),
  );
const redrive = async (body: unknown) => {
  const res = await POST(
    new Request("http://localhost/api/dlq/redrive", {
      method: "POST",
      headers: { ...LOCAL_REQUEST_HEADERS, "content-type": "application/json" },
      body: JSON.stringify({ topic: dlq, ...(body as object) }),
    }),
  );
  const json = await res.json();
  if (res.status !== 200) throw new Error(`redrive ${res.status}: ${JSON.stringify(json)}`);
  return redriveResponseSchema.parse(json);
};
const be = (width: 4 | 8, n: bigint) => {
  const b = Buffer.alloc(width);
  if (width === 4) b.writeInt32BE(Number(n));
  else b.writeBigInt64BE(n);
  return b;
};
/** `kcat -C` of one record: its key, its headers (`k=v,…`) and its payload. */
const kcatRecord = (t: string, partition: number, offset: string) =>
  execFileSync(
    "kcat",
    ["-C", "-b", BROKERS, "-t", t, "-p", String(partition), "-o", offset, "-c", "1", "-e", "-q", "-f", "%k\n%h\n%s"],
    { encoding: "utf8", timeout: 20_000 },
  ).split("\n");

const MARSHAL_MESSAGE =
  "failed to deserialize; nested exception is com.fasterxml.jackson.core.JsonParseException: Unexpected character ('<' (code 60))";
const springText = (fqcn: string, message: string) => ({
  [SPRING_DLT.originalTopic]: topic,
  [SPRING_DLT.originalTimestampType]: "CreateTime",
  [SPRING_DLT.exceptionFqcn]: fqcn,
  [SPRING_DLT.exceptionMessage]: message,
});

beforeAll(async () => {
  [topic, dlq] = (await own.topics("dlq-conv", { "": 2, ".dlq": 1 })).names as [string, string];
  useConfig({ KAFKA_BROKERS: BROKERS, CONSUMER_TOPICS: topic }, { mode: "embedded" });
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  producer = new Kafka({ clientId: "dlq-conv-test", brokers: [...own.brokers], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
}, 60_000);

afterAll(async () => {
  await producer?.disconnect();
  await setRedrivePublisher(null);
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("DLQ records of Spring Kafka and Kafka Connect", () => {
  const uuid = ulid();

  it("lists them with their convention, original topic and exception; reason=marshal lists the deserialization failures", async () => {
    // Spring's deserializer failures as kcat publishes their text headers (no consumer group: not a listener's failure).
    for (let i = 0; i < 3; i++)
      await kcatProduce(
        BROKERS,
        dlq,
        0,
        `<not json ${i}>`,
        springText("org.springframework.kafka.support.serializer.DeserializationException", MARSHAL_MESSAGE),
      );
    // A listener's failure, as Spring's producer writes it: binary numbers, the original message's headers (its UUID) kept, its key.
    await producer.send({
      topic: dlq,
      messages: [
        {
          key: "customer-42",
          value: '{"order":7}',
          headers: {
            [WATERMILL_UUID_HEADER]: uuid,
            ...springText(
              "org.springframework.kafka.listener.ListenerExecutionFailedException",
              "Listener method 'onOrder' threw exception; nested exception is java.lang.IllegalStateException: no such customer",
            ),
            [SPRING_DLT.exceptionCauseFqcn]: "java.lang.IllegalStateException",
            [SPRING_DLT.originalConsumerGroup]: "billing",
            [SPRING_DLT.originalPartition]: be(4, 1n),
            [SPRING_DLT.originalOffset]: be(8, 1234n),
            [SPRING_DLT.originalTimestamp]: be(8, 1_765_000_000_000n),
          },
        },
      ],
    });
    await kcatProduce(BROKERS, dlq, 0, "\u0000garbage", {
      [CONNECT_ERRORS.topic]: topic,
      [CONNECT_ERRORS.partition]: "0",
      [CONNECT_ERRORS.offset]: "77",
      [CONNECT_ERRORS.connectorName]: "jdbc-sink",
      [CONNECT_ERRORS.taskId]: "0",
      [CONNECT_ERRORS.stage]: "VALUE_CONVERTER",
      [CONNECT_ERRORS.exceptionClassName]: "org.apache.kafka.connect.errors.DataException",
      [CONNECT_ERRORS.exceptionMessage]: "Converting byte[] to Kafka Connect data failed",
    });

    const all = (await list("")).entries;
    expect(all).toHaveLength(5);
    for (const e of all) expect(e.topicPoisoned).toBe(topic);
    const listener = all.find((e) => e.uuid === uuid)!;
    expect(listener).toMatchObject({
      convention: "spring",
      reasonClass: "handler_error",
      handler: "billing",
      handlerIs: "consumer-group",
      exceptionClass: "org.springframework.kafka.listener.ListenerExecutionFailedException",
      original: { partition: 1, offset: "1234", timestamp: new Date(1_765_000_000_000).toISOString() },
      redrivable: true,
    });
    expect(listener.reason).toMatch(/no such customer/);
    const connect = all.find((e) => e.convention === "connect")!;
    expect(connect).toMatchObject({
      reasonClass: "marshal",
      handler: "jdbc-sink",
      handlerIs: "connector",
      original: { partition: 0, offset: "77" },
      exceptionClass: "org.apache.kafka.connect.errors.DataException",
    });

    const marshal = await list("reason=marshal");
    expect(marshal.entries.map((e) => e.convention).sort()).toEqual(["connect", "spring", "spring", "spring"]);
    expect(marshal.reasons).toMatchObject({ marshal: 4, handler_error: 1 });
    // A Spring record without the original's UUID is not re-drivable, and says why.
    const noUuid = marshal.entries.find((e) => e.convention === "spring")!;
    expect(noUuid).toMatchObject({
      uuid: null,
      redrivable: false,
      exceptionClass: "org.springframework.kafka.support.serializer.DeserializationException",
      reason: MARSHAL_MESSAGE,
    });
    expect(noUuid.notRedrivable).toContain(WATERMILL_UUID_HEADER);

    // The backlog gauge files them as the page does: under the original topic, the consumer group or connector, the reason class.
    const backlog = await readDlqBacklog(dlq);
    const group = (handler: string, reasonClass: string) =>
      backlog.groups.find((g) => g.handler === handler && g.reasonClass === reasonClass && g.topic === topic)?.count;
    expect(backlog.total).toBe(5);
    expect(group("billing", "handler_error")).toBe(1);
    expect(group("jdbc-sink", "marshal")).toBe(1);
    expect(group("", "marshal")).toBe(3);
  });

  it("shows Spring's binary headers as numbers on the record page", async () => {
    const e = (await list("")).entries.find((x) => x.uuid === uuid) as DlqEntry;
    const res = await getRecords(
      new Request(`http://localhost/api/records?topic=${dlq}&partition=${e.partition}&offset=${e.offset}`),
    );
    const body = recordsResponseSchema.parse(await res.json());
    if (body.kind !== "record") throw new Error("expected one record");
    const h = Object.fromEntries(body.record.headers.map((x) => [x.key, x]));
    expect(h[SPRING_DLT.originalOffset]?.number).toEqual({ text: "1234", as: "8-byte big-endian" });
    expect(h[SPRING_DLT.originalPartition]?.number).toEqual({ text: "1", as: "4-byte big-endian" });
    expect(h[SPRING_DLT.originalTimestamp]?.number?.as).toBe(
      `8-byte big-endian, ${new Date(1_765_000_000_000).toISOString()}`,
    );
    expect(h[SPRING_DLT.exceptionFqcn]?.number).toBeUndefined();
  });

  it("re-drives a Spring record to its original topic with its key and UUID, without the DLT headers (kcat)", async () => {
    const r = await redrive({ uuids: [uuid], dryRun: false });
    expect(r).toMatchObject({ matched: 1, redriven: 1, preview: [{ uuid, topic, sendUuid: uuid }] });
    // The topic had no record: the copy is the one record of the partition its key chose.
    const offsets = await Promise.all([0, 1].map((p) => kcatOffsets(BROKERS, topic, p)));
    expect(offsets.flat()).toEqual(["0"]);
    const partition = offsets.findIndex((o) => o.length === 1);
    const [key, headers, payload] = kcatRecord(topic, partition, "0");
    expect(key).toBe("customer-42");
    expect(payload).toBe('{"order":7}');
    expect(headers).toContain(`${WATERMILL_UUID_HEADER}=${uuid}`);
    expect(headers).not.toContain("kafka_dlt-");
  });
});
