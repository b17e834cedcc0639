/**
 * The DLQ backlog against the shared Kafka: records a PoisonQueue wrote to a DLQ topic (its four
 * Watermill headers and the reason class) are counted per handler and reason from the topic itself,
 * however long ago they were poisoned, and exported as `dedup_dlq_backlog_records`.
 */
import { randomBytes } from "node:crypto";
import { Registry } from "prom-client";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HANDLER_POISONED_KEY, REASON_CLASS_POISONED_KEY, REASON_POISONED_KEY, SUBSCRIBER_POISONED_KEY, TOPIC_POISONED_KEY } from "@/names/dedup";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { newMessage } from "@/server/dedup/message";
import { parseConfig } from "@/server/config";
import { dlqBacklogText } from "@/lib/on-call-text";
import { KafkaTransport } from "@/server/transport";
import { clearDlqBacklog, dlqBacklog, handlerBacklog, registerDlqBacklogGauge } from "./dlq-backlog";
import { setRecordReader } from "./records";

const BROKERS = "127.0.0.1:9092";
const id = randomBytes(4).toString("hex");
const topic = `oncall-dlqbl-${id}`;
const dlq = `${topic}.dlq`;
const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
const saved = g.__dedupHealthConfig;
let transport: KafkaTransport;

/** A DLQ copy as the PoisonQueue writes it. */
const poisoned = (handler: string, reasonClass: string, reason: string) =>
  newMessage(ulid(), '{"order":1}', {
    metadata: { [HANDLER_POISONED_KEY]: handler, [TOPIC_POISONED_KEY]: topic, [REASON_CLASS_POISONED_KEY]: reasonClass, [REASON_POISONED_KEY]: reason, [SUBSCRIBER_POISONED_KEY]: "kafka" },
  });

beforeAll(async () => {
  g.__dedupHealthConfig = { ...parseConfig({ KAFKA_BROKERS: BROKERS, CONSUMER_TOPICS: topic }), mode: "real" };
  clearDlqBacklog();
  transport = new KafkaTransport([BROKERS]);
  await transport.createTopics([{ name: topic, partitions: 1 }, { name: dlq, partitions: 3 }]);
  const msgs = [
    ...Array.from({ length: 35 }, () => poisoned("on-order-paid", "redis_conn", "dedup store failed (redis_conn) on claim of x: connect ECONNREFUSED; fail-closed")),
    ...Array.from({ length: 5 }, () => poisoned("on-order-paid", "handler_error", "boom")),
    ...Array.from({ length: 3 }, () => poisoned("on-review-created", "non_retryable", "bad payload")),
  ];
  await transport.publisher.publish(dlq, ...msgs);
}, 60_000);

afterAll(async () => {
  clearDlqBacklog();
  await setRecordReader(null);
  await transport?.deleteTopics([topic, dlq]);
  await transport?.close();
  g.__dedupHealthConfig = saved;
});

describe("the DLQ backlog is read from the DLQ topic", () => {
  it("counts what waits per handler and reason, says so under the tiles, and exports it as a gauge", async () => {
    const b = await dlqBacklog(20_000);
    expect(b?.error).toBeNull();
    expect(b?.topics).toEqual([expect.objectContaining({ dlqTopic: dlq, total: 43, complete: true })]);
    const mine = handlerBacklog(b, "on-order-paid", new Set([topic]));
    expect(mine).toMatchObject({ status: "ok", total: 40, byReason: { redis_conn: 35, handler_error: 5 }, complete: true, dlqTopic: dlq });
    expect(dlqBacklogText(mine)).toMatch(/^40 DLQ records wait for a re-drive \(redis_conn 35, handler_error 5; newest \d\d:\d\d:\d\d\)$/);
    // Another topic's handler of the same name has none here.
    expect(handlerBacklog(b, "on-order-paid", new Set(["elsewhere"]))).toMatchObject({ status: "ok", total: 0 });

    const registry = new Registry();
    registerDlqBacklogGauge(registry);
    const text = await registry.metrics();
    expect(text).toContain(`${OBSERVE_METRIC_NAMES.dlqBacklog}{topic="${topic}",handler="on-order-paid",reason_poisoned="redis_conn"} 35`);
    expect(text).toContain(`${OBSERVE_METRIC_NAMES.dlqBacklog}{topic="${topic}",handler="on-review-created",reason_poisoned="non_retryable"} 3`);
  }, 60_000);
});
