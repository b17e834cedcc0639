/**
 * DLQ record states against the shared Kafka and PostgreSQL: a re-drive and a discard resolve
 * records, the backlog gauge counts the open ones only at the next scrape, both actions are in the
 * audit trail with who and what, the states survive a new store on the same table, and a position
 * that retention deleted reads `expired`.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { Pool } from "pg";
import { Registry } from "prom-client";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discardResponseSchema, dlqResponseSchema, redriveResponseSchema } from "@/lib/api/dlq";
import {
  HANDLER_POISONED_KEY,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
} from "@/names/dedup";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { newMessage } from "@/server/dedup";
import { PostgresAuditStore } from "@/server/audit/store";
import { setAuditStore } from "@/server/audit";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { TEST_DATABASE_URL } from "@/server/testing/buggy-consumer";
import { ownKafka } from "@/server/testing/own-kafka";
import { GET } from "./route";
import { POST as redrivePost } from "./redrive/route";
import { POST as discardPost } from "./discard/route";
import {
  clearDlqBacklog,
  dlqBacklog,
  readDlqBacklog,
  registerDlqBacklogGauge,
} from "@/server/observe/watchers/dlq-backlog";
import { DLQ_STATE_TABLE, PostgresDlqStateStore, setDlqStateStore } from "@/server/observe/records/dlq-state";
import { topicStates } from "@/server/observe/records/dlq-resolutions";
import { setRecordReader } from "@/server/observe/records/records";
import { setRedrivePublisher } from "@/server/observe/records/redrive-publisher";

const own = ownKafka();
configOfFile();
const id = ulid().slice(-8).toLowerCase();
const stateTable = `dlq_state_t_${id}`;
const auditTable = `audit_dlqstate_${id}`;
let topic: string;
let dlq: string;
let audit: PostgresAuditStore;
const uuids = Array.from({ length: 10 }, () => ulid());

const post = async (handler: (r: Request) => Promise<Response>, url: string, body: unknown) => {
  const res = await handler(
    new Request(`http://localhost${url}`, {
      method: "POST",
      headers: { "content-type": "application/json", host: "localhost", "x-forwarded-for": "127.0.0.1" },
      body: JSON.stringify(body),
    }),
  );
  const json: unknown = await res.json();
  if (res.status !== 200) throw new Error(`${url} ${res.status}: ${JSON.stringify(json)}`);
  return json;
};
const poisoned = (u: string, i: number, on: string) =>
  newMessage(u, `{"order":${i}}`, {
    metadata: {
      [HANDLER_POISONED_KEY]: "on-order-paid",
      [TOPIC_POISONED_KEY]: on,
      [REASON_CLASS_POISONED_KEY]: "handler_error",
      [REASON_POISONED_KEY]: "boom",
      [SUBSCRIBER_POISONED_KEY]: "kafka",
    },
  });
const list = async (q: string) =>
  dlqResponseSchema.parse(await (await GET(new Request(`http://localhost/api/dlq?${q}`))).json());

/** One scrape of the dashboard's gauges: the backlog of open records summed, and the oldest open record's age. */
async function scrape(registry: Registry): Promise<{ backlog: number; oldestAge: number | null }> {
  const text = await registry.metrics();
  let backlog = 0;
  let oldestAge: number | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${OBSERVE_METRIC_NAMES.dlqBacklog}{topic="${topic}"`))
      backlog += Number(line.split(" ").at(-1));
    if (line.startsWith(`${OBSERVE_METRIC_NAMES.dlqOldestOpenAge}{topic="${topic}"}`))
      oldestAge = Number(line.split(" ").at(-1));
  }
  return { backlog, oldestAge };
}

beforeAll(async () => {
  [topic, dlq] = (await own.topics("dlq-state", { "": 1, ".dlq": 1 })).names as [string, string];
  useConfig({ KAFKA_BROKERS: own.brokers.join(","), CONSUMER_TOPICS: topic }, { mode: "embedded" });
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  await setDlqStateStore(new PostgresDlqStateStore(TEST_DATABASE_URL, stateTable));
  audit = new PostgresAuditStore(TEST_DATABASE_URL, auditTable);
  await setAuditStore(audit);
  clearDlqBacklog();
  const msgs = uuids.map((u, i) => poisoned(u, i, topic));
  // One by one: the records' times (and so the oldest open record) follow their offsets.
  for (const m of msgs) await own.kafka.publisher.publish(dlq, m);
}, 60_000);

afterAll(async () => {
  clearDlqBacklog();
  await new PostgresDlqStateStore(TEST_DATABASE_URL, stateTable).drop().catch(() => undefined);
  await setDlqStateStore(null);
  await audit.drop().catch(() => undefined);
  await setAuditStore(null);
  await setRedrivePublisher(null);
  await setRecordReader(null);
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("DLQ record states", () => {
  it("re-driving 3 and discarding 2 lowers the backlog gauge by 3, then 2, at the next scrape; both are audited with who and what", async () => {
    const registry = new Registry();
    registerDlqBacklogGauge(registry);
    expect((await dlqBacklog(20_000))?.topics[0]?.total).toBe(10);
    const before = await scrape(registry);
    expect(before.backlog).toBe(10);
    const poisonedAt = new Map((await list("limit=200")).entries.map((e) => [e.uuid, Date.parse(e.poisonedAt)]));
    // The age of the oldest open record: the first one published.
    expect(before.oldestAge! * 1000).toBeGreaterThanOrEqual(Date.now() - poisonedAt.get(uuids[0]!)! - 5000);
    expect(before.oldestAge! * 1000).toBeLessThanOrEqual(Date.now() - poisonedAt.get(uuids[0]!)!);

    const r = redriveResponseSchema.parse(
      await post(redrivePost, "/api/dlq/redrive", { uuids: uuids.slice(0, 3), dryRun: false }),
    );
    expect(r.redriven).toBe(3);
    expect((await scrape(registry)).backlog).toBe(7);

    // The two oldest: the oldest open record is now the 3rd published.
    const page = await list("state=open&limit=200");
    const oldest = page.entries
      .filter((e) => uuids.indexOf(e.uuid!) >= 3)
      .sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)))
      .slice(0, 2);
    expect(oldest.map((e) => e.uuid)).toEqual(uuids.slice(3, 5));
    const d = discardResponseSchema.parse(
      await post(discardPost, "/api/dlq/discard", {
        positions: oldest.map((e) => ({ partition: e.partition, offset: e.offset })),
        why: "test orders, never real",
        dryRun: false,
      }),
    );
    expect(d).toMatchObject({ matched: 2, discarded: 2, notOpen: 0, notFound: 0 });
    const after = await scrape(registry);
    expect(after.backlog).toBe(5);
    // The oldest open record is now the sixth published: the five before it were resolved.
    expect((await dlqBacklog(0))?.topics[0]?.oldestOpenAt).toBe(poisonedAt.get(uuids[5]!));
    expect(after.oldestAge! * 1000).toBeLessThanOrEqual(Date.now() - poisonedAt.get(uuids[5]!)!);

    const trail = await audit.list({ limit: 10, changesOnly: true });
    const redrive = trail.find((e) => e.action === "dlq.redrive");
    const discard = trail.find((e) => e.action === "dlq.discard");
    expect(redrive).toMatchObject({ who: "local", changed: 3 });
    expect(redrive?.touched.uuids?.items.sort()).toEqual(uuids.slice(0, 3).sort());
    expect(redrive?.touched.sourceOffsets?.items).toHaveLength(3);
    expect(discard).toMatchObject({
      who: "local",
      changed: 2,
      filter: expect.objectContaining({ why: "test orders, never real" }),
    });
    expect(discard?.touched.sourceOffsets?.items.sort()).toEqual(
      oldest.map((e) => `${dlq}/${e.partition}/${e.offset}`).sort(),
    );
    expect(discard?.touched.uuids?.items.sort()).toEqual(uuids.slice(3, 5).sort());
  }, 60_000);

  it("the states survive a new store on the same table: the page lists who re-drove each record where, and who discarded which and why", async () => {
    await setDlqStateStore(new PostgresDlqStateStore(TEST_DATABASE_URL, stateTable));
    const all = await list("state=any&limit=200");
    const byUuid = new Map(all.entries.map((e) => [e.uuid, e]));
    for (const u of uuids.slice(0, 3)) {
      expect(byUuid.get(u)).toMatchObject({ state: "redriven", resolution: { who: "local", to: { topic, uuid: u } } });
      expect(byUuid.get(u)?.resolution?.to?.offset).toMatch(/^\d+$/);
    }
    for (const u of uuids.slice(3, 5))
      expect(byUuid.get(u)).toMatchObject({
        state: "discarded",
        resolution: { who: "local", why: "test orders, never real" },
      });
    expect((await list("limit=200")).entries.map((e) => e.uuid).sort()).toEqual(uuids.slice(5).sort());
    expect((await list("state=discarded&limit=200")).entries).toHaveLength(2);
  }, 60_000);

  it("a re-drive by filter leaves re-driven and discarded records alone; named by UUID, a re-driven one goes again", async () => {
    const dry = redriveResponseSchema.parse(
      await post(redrivePost, "/api/dlq/redrive", { filter: { handler: "on-order-paid" }, dryRun: true }),
    );
    expect(dry).toMatchObject({ matched: 5, notOpen: 5 });
    const named = redriveResponseSchema.parse(
      await post(redrivePost, "/api/dlq/redrive", { uuids: [uuids[0]!], dryRun: true }),
    );
    expect(named.matched).toBe(1);
    // Discarding a record already discarded changes nothing.
    const again = discardResponseSchema.parse(
      await post(discardPost, "/api/dlq/discard", { uuids: uuids.slice(3, 5), why: "again", dryRun: false }),
    );
    expect(again).toMatchObject({ matched: 0, discarded: 0, notOpen: 2 });
  }, 60_000);

  it("a position below the partition's low watermark reads expired, and leaves the backlog with its resolution", async () => {
    const admin = new Kafka({ brokers: [...own.brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [dlq] });
      // Retention took the first four records: three re-driven, one discarded.
      await admin.deleteTopicRecords({ topic: dlq, partitions: [{ partition: 0, offset: "4" }] });
    } finally {
      await admin.disconnect();
    }
    const states = await topicStates(dlq);
    expect(states.of({ partition: 0, offset: "0" }).state).toBe("expired");
    expect(states.of({ partition: 0, offset: "4" }).state).toBe("discarded");
    expect(states.of({ partition: 0, offset: "5" }).state).toBe("open");
    const b = await readDlqBacklog(dlq);
    expect(b.total).toBe(5);
  }, 60_000);

  it("npm run dlq:replay leaves a discarded record alone and records each one it re-drives as redriven by cli (<user>)", async () => {
    const [t2, dlq2] = (await own.topics("dlq-state-cli", { "": 1, ".dlq": 1 })).names as [string, string];
    for (let i = 0; i < 4; i++) await own.kafka.publisher.publish(dlq2, poisoned(ulid(), i, t2));
    // The CLI reads and writes the app's table (DATABASE_URL, the default name): this test's rows are its own topic's.
    const store = new PostgresDlqStateStore(TEST_DATABASE_URL, DLQ_STATE_TABLE);
    const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    try {
      await store.resolve(dlq2, [{ partition: 0, offset: "0", state: "discarded", who: "local", why: "a test order" }]);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        KAFKA_BROKERS: own.brokers.join(","),
        CONSUMER_TOPICS: t2,
        DATABASE_URL: TEST_DATABASE_URL,
      };
      for (const k of ["REDIS_URL", "REDIS_CLUSTER_NODES", "PROMETHEUS_URL", "WORKSHOP_TOKEN", "DEMO_TOPIC"])
        delete env[k];
      const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/dlq-replay.ts", "--topic", dlq2], {
        cwd: process.cwd(),
        env,
        timeout: 90_000,
      });
      expect(stdout).toContain("replayed 3");
      expect(stdout).toContain("left 1 alone: already re-driven or discarded");
      const states = await store.resolved(dlq2);
      expect(states.get("0:0")).toMatchObject({ state: "discarded", why: "a test order" });
      for (const o of ["1", "2", "3"]) {
        expect(states.get(`0:${o}`)).toMatchObject({
          state: "redriven",
          who: expect.stringMatching(/^cli \(.+\)$/),
          to: { topic: t2 },
        });
        const to = states.get(`0:${o}`);
        expect(to?.state === "redriven" ? to.to.offset : null).toMatch(/^\d+$/);
      }
    } finally {
      await pool.query(`DELETE FROM "public"."${DLQ_STATE_TABLE}" WHERE dlq_topic = $1`, [dlq2]).catch(() => undefined);
      await pool.end();
      await store.close();
    }
  }, 120_000);
});
