/**
 * Real mode: the crash storm on Kafka (127.0.0.1:9092), Redis and PostgreSQL. The same 3 crashes
 * against each guarantee: Redis dedup publishes outputs twice, the inbox writes no effect row twice,
 * Kafka transactions show a read_committed reader no output twice — every figure measured in the
 * run — and the run leaves no topic, group, schema or key behind.
 */
import { randomBytes } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { Pool } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { Guarantee, GuaranteeRun, RunView } from "@/lib/api/workshop";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { TEST_BROKERS } from "@/server/testing/own-kafka";
import { scenarioEnv } from "../env";
import { WorkshopRunner } from "../workshop";
import { STORM } from "./storm";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const service = `wsstorm${randomBytes(3).toString("hex")}`;
const redis = createDedupRedis({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
const admin = new Kafka({
  clientId: "crash-storm-test",
  brokers: [...TEST_BROKERS],
  logLevel: logLevel.NOTHING,
}).admin();
const pool = new Pool({ connectionString: DATABASE_URL, max: 1 });

afterAll(async () => {
  await deleteKeysByPrefix(redis, `${service}:dedup`);
  redis.disconnect();
  await admin.disconnect();
  await pool.end();
});

async function stormRun(databaseUrl: string, kafka = true): Promise<RunView> {
  const env = scenarioEnv({ kafkaBrokers: kafka ? [...TEST_BROKERS] : undefined, redis, databaseUrl, service });
  try {
    const runner = new WorkshopRunner(() => env);
    return await runner.wait(runner.start("crash-storm-guarantees"));
  } finally {
    await env.close();
  }
}

function measured(v: RunView, g: Guarantee): Extract<GuaranteeRun, { status: "measured" }> {
  const x = v.guarantees?.find((y) => y.guarantee === g);
  if (x?.status !== "measured") throw new Error(`${g} not measured: ${JSON.stringify(x)}`);
  return x;
}

describe("crash storm, real mode (Kafka, Redis, PostgreSQL)", () => {
  it("3 crashes each: Redis dedup performs side effects twice, the inbox and Kafka transactions never; nothing left behind", async () => {
    const v = await stormRun(DATABASE_URL);
    expect(v.error).toBeNull();
    const redisRun = measured(v, "redis");
    const inbox = measured(v, "inbox");
    const tx = measured(v, "transactions");
    for (const g of [redisRun, inbox, tx]) {
      expect(g.crashes, g.guarantee).toBe(STORM.crashes);
      expect(g.summary.lost, g.guarantee).toBe(0);
    }
    expect(redisRun.summary.duplicateSideEffects).toBeGreaterThan(0);
    expect(redisRun.summary.sideEffects).toBe(STORM.events + redisRun.summary.duplicateSideEffects);
    expect(inbox.summary.duplicateSideEffects).toBe(0);
    expect(inbox.summary.sideEffects).toBe(STORM.events);
    expect(tx.summary.duplicateSideEffects).toBe(0);
    expect(tx.summary.sideEffects).toBe(STORM.events);
    expect(tx.countedBy).toContain("read_committed");
    expect(v.outcome?.met).toBe(true);
    console.log(
      `[crash-storm] duplicates: redis ${redisRun.summary.duplicateSideEffects}, inbox ${inbox.summary.duplicateSideEffects}, transactions ${tx.summary.duplicateSideEffects} (3 crashes each, ${STORM.events} events)`,
    );

    // Clean: its topics, groups, inbox schema and keys are gone.
    await admin.connect();
    expect((await admin.listTopics()).filter((t) => t.includes(v.runId))).toEqual([]);
    expect((await admin.listGroups()).groups.filter((g) => g.groupId.includes(v.runId))).toEqual([]);
    const schemas = await pool.query("SELECT nspname FROM pg_namespace WHERE nspname = $1", [`wsi_${v.runId}`]);
    expect(schemas.rows).toEqual([]);
    expect(await redis.keys(`${service}:dedup:*${v.runId}*`)).toEqual([]);
  }, 120_000);

  it("PostgreSQL not answering: the inbox says not run and why, its checks are not evaluated; Redis and transactions are measured", async () => {
    const v = await stormRun("postgres://postgres@127.0.0.1:1/none");
    const inbox = v.guarantees?.find((g) => g.guarantee === "inbox");
    expect(inbox?.status).toBe("not-run");
    expect(inbox?.status === "not-run" && inbox.reason).toMatch(/^PostgreSQL \(DATABASE_URL\) unreachable: /);
    for (const c of v.outcome!.checks.filter((x) => x.guarantee === "inbox")) expect(c.actual).toBeNull();
    expect(measured(v, "redis").summary.duplicateSideEffects).toBeGreaterThan(0);
    expect(measured(v, "transactions").summary.duplicateSideEffects).toBe(0);
    expect(v.outcome?.met).toBe(true);
  }, 120_000);

  it("the embedded broker with PostgreSQL: the inbox is measured (0 twice), Kafka transactions are not run", async () => {
    const v = await stormRun(DATABASE_URL, false);
    const inbox = measured(v, "inbox");
    expect(inbox.crashes).toBe(STORM.crashes);
    expect(inbox.summary.duplicateSideEffects).toBe(0);
    expect(inbox.summary.lost).toBe(0);
    expect(measured(v, "redis").summary.duplicateSideEffects).toBeGreaterThan(0);
    expect(v.guarantees?.find((g) => g.guarantee === "transactions")?.status).toBe("not-run");
    expect(v.outcome?.met).toBe(true);
  }, 120_000);
});
