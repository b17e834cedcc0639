/**
 * The DLQ browser and re-drive against the real stack, with a consumer running the spec's stack:
 * a record without a UUID is listed under `marshal` within seconds and a dry run reports it without
 * publishing; a handler-error record, once the handler is fixed, is re-driven (same UUID) and
 * processed once — one row in the side-effect table, also after a second re-drive.
 */
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dlqResponseSchema, redriveResponseSchema, type DlqEntry } from "@/lib/api/dlq";
import { EVENT_TYPE_KEY } from "@/names/dedup";
import { recordReader } from "@/server/observe/records/records";
import { setRedrivePublisher } from "@/server/observe/records/redrive-publisher";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { startBuggyConsumer, type BuggyConsumer } from "@/server/testing/buggy-consumer";
import { kcatProduce } from "@/server/testing/kcat";
import { ownKafka } from "@/server/testing/own-kafka";
import { GET } from "./route";
import { POST } from "./redrive/route";

const own = ownKafka();
configOfFile();
const BROKERS = own.brokers.join(",");
let topic: string;
let dlq: string;
let consumer: BuggyConsumer;

const list = async (q: string) =>
  dlqResponseSchema.parse(await (await GET(new Request(`http://localhost/api/dlq?${q}`))).json());
const redrive = async (body: unknown) => {
  const res = await POST(
    new Request("http://localhost/api/dlq/redrive", {
      method: "POST",
      headers: { "content-type": "application/json", host: "localhost", "x-forwarded-for": "127.0.0.1" },
      body: JSON.stringify(body),
    }),
  );
  const json = await res.json();
  if (res.status !== 200) throw new Error(`redrive ${res.status}: ${JSON.stringify(json)}`);
  return redriveResponseSchema.parse(json);
};
const topicEnd = async () => (await recordReader().ranges(topic)).reduce((a, r) => a + r.high, 0n);

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  [topic, dlq] = (await own.topics("act-dlq", { "": 2, ".dlq": 1 })).names as [string, string];
  // The re-drive changes state: open without a token only to requests from this machine, to a server
  // bound to loopback (the origin Next.js records once listening on 127.0.0.1).
  useConfig({ KAFKA_BROKERS: BROKERS, CONSUMER_TOPICS: topic }, { mode: "embedded" });
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  consumer = await startBuggyConsumer({ transport: own.kafka, topic, dlqTopic: dlq, redis: own.redis });
}, 60_000);

afterAll(async () => {
  await consumer?.stop();
  await setRedrivePublisher(null);
  if (consumer)
    await own.redis.eval(
      "for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', k) end",
      0,
      `${consumer.service}:*`,
    );
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("DLQ browser and re-drive", () => {
  it("lists a record without a UUID under marshal within seconds; a dry run reports it and publishes nothing", async () => {
    await kcatProduce(BROKERS, topic, 0, '{"no":"uuid"}', { [EVENT_TYPE_KEY]: "x" });
    const t0 = Date.now();
    const entry = await until<DlqEntry>(
      "the marshal record in the DLQ list",
      async () => (await list("reason=marshal")).entries[0],
    );
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(entry).toMatchObject({
      uuid: null,
      reasonClass: "marshal",
      topicPoisoned: topic,
      handler: consumer.handler,
      redrivable: false,
    });
    const page = await list(`handler=${consumer.handler}`);
    expect(page.reasons).toMatchObject({ marshal: 1 });
    const before = await topicEnd();
    const dry = await redrive({ filter: { reason: "marshal" }, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, matched: 0, skipped: 1, redriven: 0 });
    expect(await topicEnd()).toBe(before);
  });

  it("re-drives a handler-error record once the handler is fixed: processed once, one side-effect row", async () => {
    const uuid = ulid();
    consumer.fail = (m) => m.uuid === uuid;
    await own.kafka.publisher.publish(topic, {
      uuid,
      metadata: { [EVENT_TYPE_KEY]: "x" },
      payload: Buffer.from('{"n":1}'),
      signal: new AbortController().signal,
      context: {},
    });
    const entry = await until<DlqEntry>("the handler-error record", async () =>
      (await list("reason=handler_error")).entries.find((e) => e.uuid === uuid),
    );
    expect(entry).toMatchObject({ handler: consumer.handler, topicPoisoned: topic, redrivable: true });
    expect(await consumer.rows(uuid)).toBe(0);

    consumer.fail = () => false; // the fix is deployed
    const before = await topicEnd();
    const dry = await redrive({ uuids: [uuid], dryRun: true });
    expect(dry).toMatchObject({ matched: 1, redriven: 0, preview: [{ uuid, topic, reasonClass: "handler_error" }] });
    expect(await topicEnd()).toBe(before);

    const real = await redrive({ uuids: [uuid], dryRun: false });
    expect(real).toMatchObject({ matched: 1, redriven: 1 });
    expect(await topicEnd()).toBe(before + 1n);
    await until("the re-driven message processed", async () => ((await consumer.rows(uuid)) === 1 ? true : undefined));
    // The same UUID re-driven again is a duplicate: the Deduplicator swallows it.
    await redrive({ uuids: [uuid], dryRun: false });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await consumer.rows(uuid)).toBe(1);
  });

  it("refuses a DLQ topic that is not one of CONSUMER_TOPICS' (403) and a body with both uuids and filter (400)", async () => {
    const res = await GET(new Request("http://localhost/api/dlq?topic=other.dlq"));
    expect(res.status).toBe(403);
    const bad = await POST(
      new Request("http://localhost/api/dlq/redrive", {
        method: "POST",
        headers: { "content-type": "application/json", host: "localhost", "x-forwarded-for": "127.0.0.1" },
        body: JSON.stringify({ uuids: ["a"], filter: {}, dryRun: true }),
      }),
    );
    expect(bad.status).toBe(400);
  });
});
