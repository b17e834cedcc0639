/**
 * The DLQ backlog against the shared Kafka: records a PoisonQueue wrote to a DLQ topic (its four
 * Watermill headers and the reason class) are counted per handler and reason from the topic itself,
 * however long ago they were poisoned, and exported as `dedup_dlq_backlog_records`.
 */
import { Registry } from "prom-client";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HANDLER_POISONED_KEY,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
} from "@/names/dedup";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { newMessage } from "@/server/dedup";
import { dlqBacklogText } from "@/lib/on-call-text";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { ownKafka } from "@/server/testing/own-kafka";
import {
  BACKLOG_LABEL_MAX_CHARS,
  BACKLOG_OTHER_HANDLERS_MAX,
  clearDlqBacklog,
  dlqBacklog,
  handlerBacklog,
  OTHER_LABEL,
  registerDlqBacklogGauge,
} from "./dlq-backlog";

const own = ownKafka();
configOfFile();
let topic: string;
let dlq: string;

/** A DLQ copy as the PoisonQueue writes it. */
const poisoned = (handler: string, reasonClass: string, reason: string) =>
  newMessage(ulid(), '{"order":1}', {
    metadata: {
      [HANDLER_POISONED_KEY]: handler,
      [TOPIC_POISONED_KEY]: topic,
      [REASON_CLASS_POISONED_KEY]: reasonClass,
      [REASON_POISONED_KEY]: reason,
      [SUBSCRIBER_POISONED_KEY]: "kafka",
    },
  });

beforeAll(async () => {
  [topic, dlq] = (await own.topics("oncall-dlqbl", { "": 1, ".dlq": 3 })).names as [string, string];
  useConfig({ KAFKA_BROKERS: own.brokers.join(","), CONSUMER_TOPICS: topic });
  clearDlqBacklog();
  const msgs = [
    ...Array.from({ length: 35 }, () =>
      poisoned(
        "on-order-paid",
        "redis_conn",
        "dedup store failed (redis_conn) on claim of x: connect ECONNREFUSED; fail-closed",
      ),
    ),
    ...Array.from({ length: 5 }, () => poisoned("on-order-paid", "handler_error", "boom")),
    ...Array.from({ length: 3 }, () => poisoned("on-review-created", "non_retryable", "bad payload")),
  ];
  await own.kafka.publisher.publish(dlq, ...msgs);
}, 60_000);

afterAll(() => {
  clearDlqBacklog();
});

describe("the DLQ backlog is read from the DLQ topic", () => {
  it("counts what waits per handler and reason, says so under the tiles, and exports it as a gauge", async () => {
    const b = await dlqBacklog(20_000);
    expect(b?.error).toBeNull();
    expect(b?.topics).toEqual([expect.objectContaining({ dlqTopic: dlq, total: 43, complete: true })]);
    const mine = handlerBacklog(b, "on-order-paid", new Set([topic]));
    expect(mine).toMatchObject({
      status: "ok",
      total: 40,
      byReason: { redis_conn: 35, handler_error: 5 },
      complete: true,
      dlqTopic: dlq,
    });
    expect(dlqBacklogText(mine)).toMatch(
      /^40 DLQ records wait for a re-drive \(redis_conn 35, handler_error 5; newest \d\d:\d\d:\d\d\)$/,
    );
    // Another topic's handler of the same name has none here.
    expect(handlerBacklog(b, "on-order-paid", new Set(["elsewhere"]))).toMatchObject({ status: "ok", total: 0 });

    const registry = new Registry();
    registerDlqBacklogGauge(registry);
    const text = await registry.metrics();
    expect(text).toContain(
      `${OBSERVE_METRIC_NAMES.dlqBacklog}{topic="${topic}",handler="on-order-paid",reason_poisoned="redis_conn"} 35`,
    );
    expect(text).toContain(
      `${OBSERVE_METRIC_NAMES.dlqBacklog}{topic="${topic}",handler="on-review-created",reason_poisoned="non_retryable"} 3`,
    );
  }, 60_000);

  it("keeps the gauge's labels bounded whatever handler and topic headers the records carry: the rest is summed as (other)", async () => {
    const spray = Array.from({ length: 500 }, (_, i) =>
      poisoned(`spray-${i}-${"x".repeat(i === 7 ? 300 : 0)}`, "handler_error", "boom"),
    );
    const foreign = Array.from({ length: 5 }, () =>
      newMessage(ulid(), "{}", {
        metadata: {
          [HANDLER_POISONED_KEY]: "on-order-paid",
          [TOPIC_POISONED_KEY]: "not-a-consumer-topic",
          [REASON_CLASS_POISONED_KEY]: "handler_error",
          [REASON_POISONED_KEY]: "boom",
        },
      }),
    );
    await own.kafka.publisher.publish(dlq, ...spray, ...foreign);
    clearDlqBacklog();
    const b = await dlqBacklog(30_000);
    expect(b?.topics[0]).toMatchObject({ total: 548, complete: true });
    const registry = new Registry();
    registerDlqBacklogGauge(registry);
    const json = await registry.getMetricsAsJSON();
    const values = json.find((m) => m.name === OBSERVE_METRIC_NAMES.dlqBacklog)!.values as Array<{
      labels: Record<string, string>;
      value: number;
    }>;
    // Before the bound: one series per distinct handler header (≈ 505 here, 5,001 in the review's probe).
    expect(values.length).toBeLessThanOrEqual(BACKLOG_OTHER_HANDLERS_MAX * 3 + 3);
    expect(values.reduce((n, v) => n + v.value, 0)).toBe(548);
    expect(values.every((v) => Object.values(v.labels).every((l) => String(l).length <= BACKLOG_LABEL_MAX_CHARS))).toBe(
      true,
    );
    expect(values.find((v) => v.labels.handler === OTHER_LABEL)?.value).toBeGreaterThanOrEqual(480);
    expect(values.find((v) => v.labels.topic === OTHER_LABEL && v.labels.handler === "on-order-paid")?.value).toBe(5);
    expect(
      values.find(
        (v) =>
          v.labels.topic === topic && v.labels.handler === "on-order-paid" && v.labels.reason_poisoned === "redis_conn",
      )?.value,
    ).toBe(35);
  }, 60_000);
});
