/**
 * Re-drive against the real stack, through the route, beside a consumer running the spec's stack
 * (PoisonQueue → DLQ, Deduplicator with payload fingerprints on Redis, side effects in PostgreSQL):
 * a re-driven record keeps its Kafka key and lands on the key's partition (kcat reads both); a
 * payload conflict is re-driven with a new UUID derived from its DLQ position — processed once, it
 * does not come back to the DLQ, a second re-drive gives the same UUID and is swallowed — and a
 * same-UUID re-drive of it is refused with the reason; a bulk re-drive keeps to its rate; the audit
 * entry lists the UUIDs and the source and destination offsets.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Pool } from "pg";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dlqResponseSchema, redriveResponseSchema, type DlqEntry } from "@/lib/api/dlq";
import {
  EVENT_TYPE_KEY,
  HANDLER_POISONED_KEY,
  POISON_REASON_CLASS,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { REDRIVEN_FROM_UUID_KEY } from "@/names/dlq";
import { setAuditStore } from "@/server/audit";
import { AUDIT_TABLE, MemoryAuditStore, PostgresAuditStore } from "@/server/audit/store";
import { DLQ_STATE_TABLE } from "@/server/observe/records/dlq-state";
import { recordReader } from "@/server/observe/records/records";
import { setRedrivePublisher } from "@/server/observe/records/redrive-publisher";
import { configOfFile, LOCAL_REQUEST_HEADERS, useConfig } from "@/server/testing/app-config";
import { startBuggyConsumer, TEST_DATABASE_URL, type BuggyConsumer } from "@/server/testing/buggy-consumer";
import { kcatFormat, kcatProduceKeyed } from "@/server/testing/kcat";
import { ownKafka } from "@/server/testing/own-kafka";
import { GET } from "../route";
import { POST } from "./route";

const own = ownKafka();
configOfFile();
const BROKERS = own.brokers.join(",");
const audit = new MemoryAuditStore();
let topic: string;
let dlq: string;
let consumer: BuggyConsumer;

const list = async (q: string) =>
  dlqResponseSchema.parse(await (await GET(new Request(`http://localhost/api/dlq?${q}`))).json());
const redrive = async (body: unknown) => {
  const res = await POST(
    new Request("http://localhost/api/dlq/redrive", {
      method: "POST",
      headers: { "content-type": "application/json", ...LOCAL_REQUEST_HEADERS },
      body: JSON.stringify(body),
    }),
  );
  const json = await res.json();
  if (res.status !== 200) throw new Error(`redrive ${res.status}: ${JSON.stringify(json)}`);
  return redriveResponseSchema.parse(json);
};
const end = async (t: string) => (await recordReader().ranges(t)).reduce((a, r) => a + r.high, 0n);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 25_000): Promise<T> {
  const stop = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** The DLQ entry of `uuid` (whatever its state), once it is there. */
const dlqEntry = (uuid: string) =>
  until<DlqEntry>(`${uuid} in the DLQ`, async () => (await list("state=any")).entries.find((e) => e.uuid === uuid));

beforeAll(async () => {
  [topic, dlq] = (await own.topics("redrive-modes", { "": 3, ".dlq": 1 })).names as [string, string];
  useConfig({ KAFKA_BROKERS: BROKERS, CONSUMER_TOPICS: topic, DLQ_REDRIVE_RATE: "50" }, { mode: "embedded" });
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  await setAuditStore(audit);
  consumer = await startBuggyConsumer({ transport: own.kafka, topic, dlqTopic: dlq, redis: own.redis });
}, 60_000);

afterAll(async () => {
  await consumer?.stop();
  await setRedrivePublisher(null);
  await setAuditStore(null);
  if (consumer)
    await own.redis.eval(
      "for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', k) end",
      0,
      `${consumer.service}:*`,
    );
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("re-drive keeps the record's key, re-drives a payload conflict with a new UUID, keeps its rate", () => {
  it("a re-driven record keeps its Kafka key and lands on the key's partition; the audit lists its UUID and both offsets", async () => {
    const uuid = ulid();
    const key = `order-${uuid.slice(-6)}`;
    consumer.fail = (m) => m.uuid === uuid;
    await kcatProduceKeyed(BROKERS, topic, key, '{"n":1}', { [WATERMILL_UUID_HEADER]: uuid, [EVENT_TYPE_KEY]: "x" });
    const entry = await dlqEntry(uuid);
    const original = (await kcatFormat(BROKERS, topic, "%k %p\n")).split("\n").filter((l) => l.startsWith(`${key} `));
    expect(original).toHaveLength(1);
    const partition = original[0]!.split(" ")[1];
    // PoisonQueue's DLQ copy keeps the key too.
    expect((await kcatFormat(BROKERS, dlq, "%k\n")).split("\n")).toContain(key);

    consumer.fail = () => false;
    const real = await redrive({ uuids: [uuid], dryRun: false });
    expect(real).toMatchObject({ redriven: 1, preview: [{ uuid, mode: "same-uuid", sendUuid: uuid }] });
    await until("the re-driven record processed", async () => ((await consumer.rows(uuid)) === 1 ? true : undefined));
    const copies = (await kcatFormat(BROKERS, topic, "%k %p %o\n")).split("\n").filter((l) => l.startsWith(`${key} `));
    expect(copies.map((l) => l.split(" ")[1])).toEqual([partition, partition]);
    const redrivenAt = copies.map((l) => l.split(" ")[2]!).sort((a, b) => Number(a) - Number(b))[1];

    const [row] = await audit.list({ action: "dlq.redrive", limit: 10 });
    expect(row).toMatchObject({ dryRun: false, changed: 1 });
    expect(row!.touched).toEqual({
      uuids: { items: [uuid], total: 1 },
      sourceOffsets: { items: [`${dlq}/${entry.partition}/${entry.offset}`], total: 1 },
      destinationOffsets: { items: [`${topic}/${partition}/${redrivenAt}`], total: 1 },
    });
  });

  it("a payload conflict is re-driven with a new UUID by default: processed once, not back in the DLQ, a repeat swallowed; same-UUID is refused with the reason", async () => {
    const uuid = ulid();
    const publish = (payload: string) =>
      own.kafka.publisher.publish(topic, {
        uuid,
        metadata: { [EVENT_TYPE_KEY]: "x" },
        payload: Buffer.from(payload),
        signal: new AbortController().signal,
        context: {},
      });
    await publish('{"n":1}');
    await until("the first payload processed", async () => ((await consumer.rows(uuid)) === 1 ? true : undefined));
    await publish('{"n":2}'); // the publisher reuses the UUID for another event
    const entry = await dlqEntry(uuid);
    expect(entry).toMatchObject({ reasonClass: "payload_conflict", redrivable: true });
    const dlqEnd = await end(dlq);
    const topicEnd = await end(topic);

    const same = await redrive({ uuids: [uuid], mode: "same-uuid", dryRun: false });
    expect(same).toMatchObject({
      matched: 0,
      redriven: 0,
      skipped: 1,
      skippedPreview: [
        {
          uuid,
          why: expect.stringContaining(
            "would loop: the done key holds another payload's fingerprint; re-drive with mode new-uuid",
          ),
        },
      ],
    });
    expect(await end(topic)).toBe(topicEnd);

    const dry = await redrive({ uuids: [uuid], dryRun: true });
    const newUuid = dry.preview[0]?.sendUuid;
    expect(dry.preview).toMatchObject([{ uuid, mode: "new-uuid" }]);
    expect(newUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    expect(await redrive({ uuids: [uuid], dryRun: false })).toMatchObject({
      redriven: 1,
      preview: [{ sendUuid: newUuid }],
    });
    await until("the re-driven conflict processed", async () =>
      (await consumer.rows(newUuid)) === 1 ? true : undefined,
    );
    const headers = (await kcatFormat(BROKERS, topic, "%h\n"))
      .split("\n")
      .filter((h) => h.includes(`${WATERMILL_UUID_HEADER}=${newUuid}`));
    expect(headers).toHaveLength(1);
    expect(headers[0]).toContain(`${REDRIVEN_FROM_UUID_KEY}=${uuid}`);

    // Re-driven again: the same new UUID, swallowed by the Deduplicator; nothing comes back to the DLQ.
    expect(await redrive({ uuids: [uuid], dryRun: false })).toMatchObject({
      redriven: 1,
      preview: [{ sendUuid: newUuid }],
    });
    await sleep(3000);
    expect(await consumer.rows(newUuid)).toBe(1);
    expect(await consumer.rows(uuid)).toBe(1);
    expect(await end(dlq)).toBe(dlqEnd);
  });

  it("a bulk re-drive keeps to DLQ_REDRIVE_RATE: 100 records at 50/s take about 2 s", async () => {
    const handler = `bulk-${ulid().slice(-6).toLowerCase()}`;
    const msgs = Array.from({ length: 100 }, (_, i) => ({
      uuid: ulid(),
      metadata: {
        [EVENT_TYPE_KEY]: "x",
        [TOPIC_POISONED_KEY]: topic,
        [HANDLER_POISONED_KEY]: handler,
        [REASON_POISONED_KEY]: "boom",
        [REASON_CLASS_POISONED_KEY]: POISON_REASON_CLASS.handlerError,
      },
      payload: Buffer.from(`{"i":${i}}`),
      signal: new AbortController().signal,
      context: {},
    }));
    await own.kafka.publisher.publish(dlq, ...msgs);
    const dry = await redrive({ filter: { handler }, dryRun: true });
    expect(dry).toMatchObject({ matched: 100, redriven: 0, previewId: expect.stringMatching(/^[A-Za-z0-9_-]{8,}$/) });
    const t0 = Date.now();
    const r = await redrive({ filter: { handler }, previewId: dry.previewId, dryRun: false });
    const ms = Date.now() - t0;
    expect(r).toMatchObject({ matched: 100, redriven: 100, ratePerSecond: 50 });
    expect(ms).toBeGreaterThanOrEqual(1900);
  });

  it("a real re-drive of a filter sends exactly what its dry run showed: a record poisoned since is left for the next dry run; no previewId, a used one or another filter's is a 400", async () => {
    const handler = `bound-${ulid().slice(-6).toLowerCase()}`;
    const poisoned = () => ({
      uuid: ulid(),
      metadata: {
        [EVENT_TYPE_KEY]: "x",
        [TOPIC_POISONED_KEY]: topic,
        [HANDLER_POISONED_KEY]: handler,
        [REASON_POISONED_KEY]: "boom",
        [REASON_CLASS_POISONED_KEY]: POISON_REASON_CLASS.handlerError,
      },
      payload: Buffer.from("{}"),
      signal: new AbortController().signal,
      context: {},
    });
    const shown = [poisoned(), poisoned(), poisoned()];
    await own.kafka.publisher.publish(dlq, ...shown);
    const dry = await redrive({ filter: { handler }, dryRun: true });
    expect(dry.matched).toBe(3);
    const late = poisoned();
    await own.kafka.publisher.publish(dlq, late); // poisoned after the preview
    await expect(redrive({ filter: { handler }, dryRun: false })).rejects.toThrow(/redrive 400: .*previewId/);
    await expect(
      redrive({ filter: { handler, reason: POISON_REASON_CLASS.marshal }, previewId: dry.previewId, dryRun: false }),
    ).rejects.toThrow(/another topic, filter or mode/);
    // The mismatch used it up: a fresh dry run, then the real one.
    const dry2 = await redrive({ filter: { handler }, dryRun: true });
    expect(dry2.matched).toBe(4);
    const fresh = poisoned();
    await own.kafka.publisher.publish(dlq, fresh);
    const real = await redrive({ filter: { handler }, previewId: dry2.previewId, dryRun: false });
    expect(real).toMatchObject({ matched: 4, redriven: 4 });
    expect(real.preview.map((p) => p.uuid).sort()).toEqual([...shown, late].map((m) => m.uuid).sort());
    await expect(redrive({ filter: { handler }, previewId: dry2.previewId, dryRun: false })).rejects.toThrow(
      /unknown or expired/,
    );
    // What the real run did not see is still open for the next dry run.
    expect((await redrive({ filter: { handler }, dryRun: true })).preview.map((p) => p.uuid)).toEqual([fresh.uuid]);
  });

  it("npm run dlq:replay --mode same-uuid refuses a payload conflict with the reason, re-drives the rest, and audits what it touched", async () => {
    const [t2, dlq2] = (await own.topics("redrive-cli", { "": 1, ".dlq": 1 })).names as [string, string];
    const poisoned = (uuid: string, reasonClass: string) => ({
      uuid,
      metadata: {
        [EVENT_TYPE_KEY]: "x",
        [TOPIC_POISONED_KEY]: t2,
        [HANDLER_POISONED_KEY]: "h",
        [REASON_POISONED_KEY]: "boom",
        [REASON_CLASS_POISONED_KEY]: reasonClass,
      },
      payload: Buffer.from("{}"),
      signal: new AbortController().signal,
      context: {},
    });
    const [conflict, plain] = [ulid(), ulid()];
    await own.kafka.publisher.publish(
      dlq2,
      poisoned(conflict, POISON_REASON_CLASS.payloadConflict),
      poisoned(plain, POISON_REASON_CLASS.handlerError),
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KAFKA_BROKERS: BROKERS,
      CONSUMER_TOPICS: t2,
      DATABASE_URL: TEST_DATABASE_URL,
    };
    for (const k of ["REDIS_URL", "REDIS_CLUSTER_NODES", "PROMETHEUS_URL", "WORKSHOP_TOKEN", "DEMO_TOPIC"])
      delete env[k];
    const trail = new PostgresAuditStore(TEST_DATABASE_URL);
    const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    try {
      const { stdout } = await promisify(execFile)(
        "npx",
        ["tsx", "scripts/dlq-replay.ts", "--topic", dlq2, "--mode", "same-uuid", "--rate", "5"],
        { cwd: process.cwd(), env, timeout: 90_000 },
      );
      expect(stdout).toContain("replayed 1");
      expect(stdout).toContain(
        "skipped 1: would loop: the done key holds another payload's fingerprint; re-drive with mode new-uuid",
      );
      const row = (await trail.list({ action: "dlq.replay", limit: 50 })).find((e) => e.filter.topic === dlq2);
      expect(row?.filter).toMatchObject({ mode: "same-uuid", rate: 5 });
      expect(row?.touched).toEqual({
        uuids: { items: [plain], total: 1 },
        sourceOffsets: { items: [`${dlq2}/0/1`], total: 1 },
        destinationOffsets: { items: [`${t2}/0/0`], total: 1 },
      });
    } finally {
      await pool
        .query(`DELETE FROM "public"."${AUDIT_TABLE}" WHERE action = 'dlq.replay' AND filter->>'topic' = $1`, [dlq2])
        .catch(() => undefined);
      await pool.query(`DELETE FROM "public"."${DLQ_STATE_TABLE}" WHERE dlq_topic = $1`, [dlq2]).catch(() => undefined);
      await pool.end();
      await trail.close();
    }
  }, 120_000);
});
