import { Registry } from "prom-client";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { HANDLER_POISONED_KEY, REASON_POISONED_KEY, TOPIC_POISONED_KEY, WATERMILL_UUID_HEADER } from "@/names/dedup";
import { dedupMetrics } from "@/server/dedup";
import { countPush, sideEffectCounters } from "@/server/notification/side-effects";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import { counterTotal } from "@/server/testing/counter-total";
import { startDemoOnKafka } from "@/server/testing/demo-on-kafka";

/**
 * The live demo's wiring on real Kafka, Redis and PostgreSQL, on a random topic, groups, key
 * service and schema: interop with Watermill's wire format, poison input, and the counters.
 */
const registry = new Registry();
const counters = sideEffectCounters(registry);
const own = startDemoOnKafka("demotest", {
  registry,
  store: ({ id, service }) =>
    new PostgresSideEffectStore({
      connectionString: "postgres://postgres@127.0.0.1:5432/test",
      schema: `demotest_${id}`,
      tablePrefix: service,
      observe: (handler, _id, r) => countPush(counters, handler, r),
    }),
});
const { service, topic, dlqTopic, redis, transport, demo } = own;

const sent = async (handler: string) =>
  (await counters.sent.get()).values.find((v) => v.labels.handler === handler)?.value ?? 0;
const dups = () => counterTotal(counters.duplicate);
const deduplicated = async (handler: string) =>
  (await dedupMetrics(registry).deduplicated.get()).values.find((v) => v.labels.handler === handler)?.value ?? 0;
const marshalErrors = async () =>
  (await dedupMetrics(registry).errors.get()).values.find((v) => v.labels.reason === "marshal")?.value ?? 0;
async function eventually(cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("demo consumer on Kafka", () => {
  it("a record from a plain kafkajs producer with only Watermill's headers is processed once; two more copies are deduplicated", async () => {
    const uuid = ulid();
    const record = {
      value: JSON.stringify({ reviewId: 7 }),
      headers: { [WATERMILL_UUID_HEADER]: uuid, "Event-Type": "review.created" },
    };
    await own.producer.send({ topic, messages: [record] });
    await eventually(async () => (await sent("on-review-created")) === 1);
    await own.producer.send({ topic, messages: [record, record] });
    await eventually(async () => (await deduplicated("on-review-created")) === 2);
    expect(await sent("on-review-created")).toBe(1);
    expect(await dups()).toBe(0);
    // The done value names the first delivery's position; the two producer re-sends sat at other offsets.
    expect(await redis.get(`${service}:dedup:on-review-created:${uuid}`)).toMatch(
      new RegExp(`^done:${topic.replace(/\./g, "\\.")}:\\d+:\\d+#[A-Za-z0-9_-]{7}$`),
    );
    const causes = (await dedupMetrics(registry).duplicatesByCause.get()).values.filter(
      (v) => v.labels.handler === "on-review-created",
    );
    expect(Object.fromEntries(causes.map((v) => [v.labels.cause, v.value]))).toEqual({
      redelivery: 0,
      republish: 2,
      unknown: 0,
    });
  });

  it("Redis cut-off: the consumer's client is disconnected for the given time (fail-open keeps consuming, redis_conn counted), then reconnects", async () => {
    const connErrors = async () =>
      (await dedupMetrics(registry).errors.get()).values.find((v) => v.labels.reason === "redis_conn")?.value ?? 0;
    const before = await connErrors();
    const sentBefore = await sent("on-page-viewed");
    const f = demo.setFaults({ redisCutoffMs: 2500 });
    expect(f.redisCutoff).toMatchObject({ available: true, active: true });
    const during = ulid();
    await own.producer.send({
      topic,
      messages: [{ value: "{}", headers: { [WATERMILL_UUID_HEADER]: during, "Event-Type": "page.viewed" } }],
    });
    await eventually(async () => (await sent("on-page-viewed")) === sentBefore + 1);
    expect(await connErrors()).toBeGreaterThan(before);
    await eventually(async () => redis.status === "ready" && !demo.getFaults().redisCutoff.active, 10_000);
    const after = ulid();
    await own.producer.send({
      topic,
      messages: [{ value: "{}", headers: { [WATERMILL_UUID_HEADER]: after, "Event-Type": "page.viewed" } }],
    });
    await eventually(
      async () => (await redis.get(`${service}:dedup:on-page-viewed:${after}`))?.startsWith("done:") === true,
    );
    expect(await redis.get(`${service}:dedup:on-page-viewed:${during}`)).toBeNull(); // processed unchecked during the cut
  });

  it("poison input goes to the DLQ with its reason and the consumer keeps consuming", async () => {
    const before = await marshalErrors();
    const bannedBefore = await sent("on-user-banned");
    const badJson = ulid();
    const after = ulid();
    await own.producer.send({
      topic,
      messages: [
        { partition: 0, value: "{}", headers: { "Event-Type": "review.created" } }, // no UUID header
        {
          partition: 0,
          value: "{not json",
          headers: { [WATERMILL_UUID_HEADER]: badJson, "Event-Type": "user.banned" },
        },
        { partition: 0, value: "{}", headers: { [WATERMILL_UUID_HEADER]: after, "Event-Type": "user.banned" } },
      ],
    });
    await eventually(async () => (await sent("on-user-banned")) === bannedBefore + 1);
    expect(await marshalErrors()).toBe(before + 1);
    const dlq = await transport.readAll(dlqTopic);
    const noUuid = dlq.find((d) => !d.ok);
    expect(noUuid?.metadata[REASON_POISONED_KEY]).toMatch(/^marshal: no _watermill_message_uuid header/);
    expect(noUuid?.metadata[TOPIC_POISONED_KEY]).toBe(topic);
    // The owner of its event type took it: it shows on that handler's DLQ panel and in the DLQ counter.
    expect(noUuid?.metadata[HANDLER_POISONED_KEY]).toBe("on-review-created");
    const poisonedMarshal = (await dedupMetrics(registry).poisoned.get()).values.find(
      (v) => v.labels.handler === "on-review-created" && v.labels.reason_poisoned === "marshal",
    )?.value;
    expect(poisonedMarshal).toBe(1);
    const json = dlq.find((d) => d.ok && d.uuid === badJson);
    expect(json?.metadata[REASON_POISONED_KEY]).toMatch(/invalid JSON payload/);
    expect(json?.metadata["handler_poisoned"]).toBe("on-user-banned");
    expect(dlq).toHaveLength(2);
  });

  it("with all four duplicate sources on for 12 s of traffic, every event the traffic published is pushed exactly once and the repeats are deduplicated", async () => {
    const uuidsOnTopic = async () => new Set((await transport.readAll(topic)).flatMap((d) => (d.ok ? [d.uuid] : [])));
    const earlier = await uuidsOnTopic();
    const dedupBefore = await counterTotal(dedupMetrics(registry).deduplicated);
    const sentBefore = await counterTotal(counters.sent);
    const poisonedBefore = await counterTotal(dedupMetrics(registry).poisoned);
    const pushed = async () => (await counterTotal(counters.sent)) - sentBefore;
    // An event whose five attempts all fail (10 % each) goes to the DLQ instead: handled, not lost.
    const poisoned = async () => (await counterTotal(dedupMetrics(registry).poisoned)) - poisonedBefore;
    demo.setSources({
      traffic: { enabled: true, ratePerSec: 60 },
      retryOnError: { enabled: true, rate: 0.1 },
      forwarderRepublish: { enabled: true, rate: 0.2, delayMs: 500 },
      rebalance: { enabled: true, replicas: 1, periodMs: 4000 },
      restartBeforeCommit: { enabled: true, periodMs: 4000 },
    });
    await new Promise((r) => setTimeout(r, 12_000));
    demo.setSources({
      traffic: { enabled: false },
      rebalance: { enabled: false },
      restartBeforeCommit: { enabled: false },
      forwarderRepublish: { enabled: false },
      retryOnError: { enabled: false },
    });
    await new Promise((r) => setTimeout(r, 2000)); // the forwarder's and the producer's late copies are on the topic
    const published = [...(await uuidsOnTopic())].filter((u) => !earlier.has(u)).length;
    expect(published).toBeGreaterThan(300); // the traffic ran: 60 a second for 12 s, fewer on a loaded machine
    // Restarts and rebalances only delay the consumer; it catches up with every event.
    await eventually(async () => (await pushed()) + (await poisoned()) >= published, 60_000).catch(() => undefined);
    expect((await pushed()) + (await poisoned())).toBe(published);
    const swallowed = (await counterTotal(dedupMetrics(registry).deduplicated)) - dedupBefore;
    expect(swallowed).toBeGreaterThan(20);
    expect(await dups()).toBe(0);
  }, 120_000);
});
