/**
 * The audit trail's markers from PostgreSQL: the same selection as in memory (time range, changes
 * only, the page's service and handler, entries without a scope everywhere), on a table made
 * before entries had a scope (migrated in place); and a replay run by `npm run dlq:replay` — another
 * process — is marked on its service's charts with what it replayed, because the CLI writes its run
 * into the trail the app reads. Needs the stack's PostgreSQL and Kafka.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Pool } from "pg";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HANDLER_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { TEST_DATABASE_URL } from "@/server/testing/buggy-consumer";
import { KafkaTransport } from "@/server/transport";
import { setAuditStore } from "./index";
import { auditMarkers } from "./markers";
import { AUDIT_TABLE, PostgresAuditStore } from "./store";

const tag = randomBytes(4).toString("hex");
const table = `audit_markers_${tag}`;
const service = `markers-${tag}`;
const topic = `markers-${tag}`;
const dlq = `${topic}.dlq`;
const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
const kafka = new KafkaTransport(["127.0.0.1:9092"]);

beforeAll(async () => {
  // A table as it was made before entries carried a scope.
  await pool.query(`CREATE TABLE "public"."${table}" (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), who text NOT NULL, action text NOT NULL,
    filter jsonb NOT NULL DEFAULT '{}', dry_run boolean NOT NULL DEFAULT false, matched integer, changed integer, result text NOT NULL)`);
  await pool.query(
    `INSERT INTO "public"."${table}" (at, who, action, result) VALUES (now() - interval '1 minute', 'local', 'demo.sources', 'ok')`,
  );
});

afterAll(async () => {
  await setAuditStore(null);
  await pool.query(`DROP TABLE IF EXISTS "public"."${table}"`);
  await pool.query(`DELETE FROM "public"."${AUDIT_TABLE}" WHERE scope->>'service' = $1`, [service]).catch(() => {});
  await pool.end();
  await kafka.deleteTopics([topic, dlq]).catch(() => {});
  await kafka.deleteGroups([`${dlq}.replay`]).catch(() => {});
  await kafka.close();
});

describe("audit markers from PostgreSQL", () => {
  it("select by time, changes only and the page's service and handler, on a table migrated to carry the scope", async () => {
    const store = new PostgresAuditStore(TEST_DATABASE_URL, table);
    await setAuditStore(store);
    const now = Date.now();
    const e = { who: "local", matched: 4, changed: 4, result: "ok", filter: {} } as const;
    await store.append({
      ...e,
      at: new Date(now - 30_000),
      action: "keys.forget",
      dryRun: false,
      scope: { service, handler: "h1" },
    });
    await store.append({
      ...e,
      at: new Date(now - 20_000),
      action: "keys.forget",
      dryRun: true,
      scope: { service, handler: "h1" },
    });
    await store.append({
      ...e,
      at: new Date(now - 10_000),
      action: "keys.ttl",
      dryRun: false,
      scope: { service, handler: "h2" },
    });
    await store.append({
      ...e,
      at: new Date(now - 5_000),
      action: "demo.faults",
      dryRun: false,
      scope: { service: `${service}-other` },
    });
    const h1 = await auditMarkers({ from: new Date(now - 120_000), to: new Date(now), service, handler: "h1" });
    // Newest first: the forget (not its dry run), and the old unscoped entry, which concerns every page.
    expect(h1.map((m) => [m.kind, m.labels.action, m.labels.handler ?? null])).toEqual([
      ["keys", "keys.forget", "h1"],
      ["source", "demo.sources", null],
    ]);
    expect(
      (await auditMarkers({ from: new Date(now - 15_000), to: new Date(now), service })).map((m) => m.labels.action),
    ).toEqual(["keys.ttl"]);
  });

  it("marks a replay run by npm run dlq:replay on its service's charts", async () => {
    await kafka.createTopics([
      { name: topic, partitions: 1 },
      { name: dlq, partitions: 1 },
    ]);
    const poison = {
      [REASON_POISONED_KEY]: "boom",
      [TOPIC_POISONED_KEY]: topic,
      [HANDLER_POISONED_KEY]: "h",
      [SUBSCRIBER_POISONED_KEY]: "kafka/r1",
    };
    for (let i = 0; i < 2; i++)
      await kafka.produceRaw(dlq, {
        headers: { [WATERMILL_UUID_HEADER]: ulid(), ...poison },
        value: Buffer.from("{}"),
      });
    await kafka.produceRaw(dlq, {
      headers: { ...poison, [REASON_POISONED_KEY]: "marshal: no _watermill_message_uuid header" },
      value: Buffer.from("x"),
    });
    const before = new Date();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KAFKA_BROKERS: "127.0.0.1:9092",
      CONSUMER_TOPICS: topic,
      DATABASE_URL: TEST_DATABASE_URL,
      SERVICE_NAME: service,
    };
    for (const k of ["REDIS_URL", "REDIS_CLUSTER_NODES", "PROMETHEUS_URL", "WORKSHOP_TOKEN", "DEMO_TOPIC"])
      delete env[k];
    const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/dlq-replay.ts", "--topic", dlq], {
      cwd: process.cwd(),
      env,
      timeout: 90_000,
    });
    expect(stdout).toContain("replayed 2");
    expect(stdout).toContain("recorded in the audit trail");

    await setAuditStore(new PostgresAuditStore(TEST_DATABASE_URL));
    const marks = await auditMarkers({ from: before, to: new Date(), service, handler: "on-anything" });
    expect(marks.map((m) => [m.kind, m.labels.service])).toEqual([["replay", service]]);
    expect(marks[0]!.title).toMatch(
      new RegExp(`^DLQ replay \\(npm run dlq:replay\\) of ${dlq}: 2 replayed of 3 matched \\(by cli \\(.+\\)\\)$`),
    );
    expect(Date.parse(marks[0]!.at)).toBeGreaterThanOrEqual(before.getTime());
  }, 120_000);
});
