import { describe, expect, it } from "vitest";
import { poisonedMetadata } from "@/names/dedup";
import { CONNECT_ERRORS, SPRING_DLT } from "@/names/dlq-conventions";
import {
  conventionHeaderNumber,
  isConventionHeader,
  readDlqConvention,
  reasonClassOf,
  type RawHeaders,
} from "./dlq-conventions";

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const utf8 = (s: string) => Buffer.from(s, "utf8");

/** The headers Spring Kafka's DeadLetterPublishingRecoverer writes (binary numbers, UTF-8 texts), as kafkajs reads them. */
function springHeaders(o: {
  topic: string;
  partition: number;
  offset: bigint;
  ts: number;
  group?: string;
  fqcn: string;
  cause?: string;
  message: string;
}): RawHeaders {
  return {
    [SPRING_DLT.originalTopic]: utf8(o.topic),
    [SPRING_DLT.originalPartition]: int32(o.partition),
    [SPRING_DLT.originalOffset]: int64(o.offset),
    [SPRING_DLT.originalTimestamp]: int64(BigInt(o.ts)),
    [SPRING_DLT.originalTimestampType]: utf8("CreateTime"),
    ...(o.group ? { [SPRING_DLT.originalConsumerGroup]: utf8(o.group) } : {}),
    [SPRING_DLT.exceptionFqcn]: utf8(o.fqcn),
    ...(o.cause ? { [SPRING_DLT.exceptionCauseFqcn]: utf8(o.cause) } : {}),
    [SPRING_DLT.exceptionMessage]: utf8(o.message),
    [SPRING_DLT.exceptionStacktrace]: utf8(`${o.fqcn}: ${o.message}\n\tat org.example.Listener.on(Listener.java:42)`),
  };
}

describe("DLQ conventions", () => {
  it("reads Spring's binary partition (4 bytes), offset and timestamp (8 bytes, big-endian) as numbers, the consumer group as the handler", () => {
    const ts = Date.UTC(2026, 11, 7, 12, 0, 0);
    const o = readDlqConvention(
      springHeaders({
        topic: "orders",
        partition: 3,
        offset: 4_294_967_301n,
        ts,
        group: "billing",
        fqcn: "org.springframework.kafka.listener.ListenerExecutionFailedException",
        cause: "java.lang.IllegalStateException",
        message: "Listener method threw: no such customer",
      }),
    );
    expect(o).toMatchObject({
      convention: "spring",
      topic: "orders",
      partition: 3,
      offset: "4294967301",
      timestamp: new Date(ts).toISOString(),
      handler: "billing",
      handlerIs: "consumer-group",
      exceptionClass: "org.springframework.kafka.listener.ListenerExecutionFailedException",
      causeClass: "java.lang.IllegalStateException",
      reason: "Listener method threw: no such customer",
      reasonClass: "handler_error",
    });
  });

  it("files a report's 18 records as the stacks wrote them: 16 marshal, 1 handler error, and PoisonQueue's own", () => {
    const deser = [
      ["org.springframework.kafka.support.serializer.DeserializationException", null],
      ["org.apache.kafka.common.errors.SerializationException", null],
      [
        "org.springframework.kafka.listener.ListenerExecutionFailedException",
        "org.springframework.messaging.converter.MessageConversionException",
      ],
      [
        "org.springframework.kafka.listener.ListenerExecutionFailedException",
        "com.fasterxml.jackson.core.JsonParseException",
      ],
    ] as const;
    const records: RawHeaders[] = [];
    for (let i = 0; i < 16; i++) {
      const [fqcn, cause] = deser[i % deser.length]!;
      records.push(
        springHeaders({
          topic: "orders",
          partition: i % 3,
          offset: BigInt(100 + i),
          ts: 1_765_000_000_000 + i,
          fqcn,
          ...(cause ? { cause, group: "billing" } : {}),
          message: "failed to deserialize; nested exception is Unexpected character ('<' (code 60))",
        }),
      );
    }
    records.push(
      springHeaders({
        topic: "orders",
        partition: 1,
        offset: 200n,
        ts: 1_765_000_000_100,
        group: "billing",
        fqcn: "org.springframework.kafka.listener.ListenerExecutionFailedException",
        cause: "java.lang.NullPointerException",
        message: "Listener method threw exception",
      }),
    );
    records.push(
      poisonedMetadata({
        reason: "dedup store failed (redis_timeout): timed out",
        reasonClass: "redis_timeout",
        topic: "orders",
        handler: "on-order",
        subscriber: "kafka",
      }),
    );
    const read = records.map(readDlqConvention);
    const classes = read.reduce<Record<string, number>>(
      (a, r) => ({ ...a, [r.reasonClass]: (a[r.reasonClass] ?? 0) + 1 }),
      {},
    );
    expect(classes).toEqual({ marshal: 16, handler_error: 1, redis_timeout: 1 });
    expect(read.map((r) => r.convention)).toEqual([...Array(17).fill("spring"), "watermill"]);
    // Every one names its original topic (where a re-drive goes) and a reason.
    for (const r of read) expect(r.topic === "orders" && r.reason !== "").toBe(true);
    // The same classes from the text metadata a decoded message keeps (binary headers left out, as decodeRecord may drop them).
    const asText = (h: RawHeaders) =>
      Object.fromEntries(
        Object.entries(h).flatMap(([k, v]) =>
          typeof v === "string" ? [[k, v]] : Buffer.isBuffer(v) && k.endsWith("fqcn") ? [[k, v.toString()]] : [],
        ),
      );
    expect(records.map((h) => reasonClassOf(asText(h)))).toEqual(read.map((r) => r.reasonClass));
  });

  it("reads Kafka Connect's text headers: original position, connector as the handler, a converter stage as marshal", () => {
    const h = (stage: string, ex: string): RawHeaders => ({
      [CONNECT_ERRORS.topic]: utf8("orders"),
      [CONNECT_ERRORS.partition]: utf8("2"),
      [CONNECT_ERRORS.offset]: utf8("9007199254740993"),
      [CONNECT_ERRORS.connectorName]: utf8("jdbc-sink"),
      [CONNECT_ERRORS.taskId]: utf8("0"),
      [CONNECT_ERRORS.stage]: utf8(stage),
      [CONNECT_ERRORS.className]: utf8("org.apache.kafka.connect.json.JsonConverter"),
      [CONNECT_ERRORS.exceptionClassName]: utf8(ex),
      [CONNECT_ERRORS.exceptionMessage]: utf8("Converting byte[] to Kafka Connect data failed"),
    });
    expect(readDlqConvention(h("VALUE_CONVERTER", "org.apache.kafka.connect.errors.DataException"))).toMatchObject({
      convention: "connect",
      topic: "orders",
      partition: 2,
      offset: "9007199254740993",
      handler: "jdbc-sink",
      handlerIs: "connector",
      subscriber: "task 0",
      exceptionClass: "org.apache.kafka.connect.errors.DataException",
      reasonClass: "marshal",
    });
    expect(readDlqConvention(h("TASK_PUT", "org.apache.kafka.connect.errors.ConnectException")).reasonClass).toBe(
      "handler_error",
    );
  });

  it("reads a repeated header at its last value, and Watermill's metadata before another convention's", () => {
    const twice = {
      ...springHeaders({
        topic: "orders",
        partition: 0,
        offset: 1n,
        ts: 0,
        fqcn: "java.lang.IllegalStateException",
        message: "x",
      }),
      [SPRING_DLT.originalTopic]: [utf8("first"), utf8("orders")],
    };
    expect(readDlqConvention(twice).topic).toBe("orders");
    const both = {
      ...twice,
      ...poisonedMetadata({
        reason: "boom",
        reasonClass: "handler_error",
        topic: "ours",
        handler: "h",
        subscriber: "kafka",
      }),
    };
    expect(readDlqConvention(both)).toMatchObject({
      convention: "watermill",
      topic: "ours",
      handler: "h",
      handlerIs: "handler",
    });
    expect(readDlqConvention({ other: "x" })).toMatchObject({
      convention: "none",
      topic: null,
      reasonClass: "handler_error",
    });
  });

  it("shows Spring's binary headers as numbers with their width, and only those", () => {
    expect(conventionHeaderNumber(SPRING_DLT.originalOffset, int64(1234n))).toEqual({
      text: "1234",
      as: "8-byte big-endian",
    });
    expect(conventionHeaderNumber(SPRING_DLT.originalPartition, int32(4))).toEqual({
      text: "4",
      as: "4-byte big-endian",
    });
    expect(conventionHeaderNumber(SPRING_DLT.originalTimestamp, int64(0n))).toEqual({
      text: "0",
      as: "8-byte big-endian, 1970-01-01T00:00:00.000Z",
    });
    expect(conventionHeaderNumber(SPRING_DLT.originalOffset, utf8("1234"))).toBeNull();
    expect(conventionHeaderNumber("other", int64(1n))).toBeNull();
    expect([SPRING_DLT.exceptionFqcn, CONNECT_ERRORS.topic, "topic_poisoned"].map(isConventionHeader)).toEqual([
      true,
      true,
      false,
    ]);
  });
});
