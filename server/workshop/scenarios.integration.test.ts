import { randomBytes } from "node:crypto";
import { afterAll, describe } from "vitest";
import { scenarioEnv } from "./env";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { expectedOutcomeSuite } from "./scenarios.suite";
import { WorkshopRunner } from "./workshop";

/**
 * Real mode: every scenario on Kafka (127.0.0.1:9092, its own topic and group per run), Redis
 * (a random key service per test file, keys deleted after each run) and PostgreSQL (a schema per
 * run, dropped after). Each summary must meet the outcome the scenario declares.
 */
const service = `wstest${randomBytes(3).toString("hex")}`;
const redis = createDedupRedis({ url: "redis://127.0.0.1:6379" });
const env = scenarioEnv({
  kafkaBrokers: ["127.0.0.1:9092"],
  redis,
  databaseUrl: "postgres://postgres@127.0.0.1:5432/test",
  service,
});
const runner = new WorkshopRunner(() => env);

afterAll(async () => {
  await deleteKeysByPrefix(redis, `${service}:dedup`);
  await env.close();
  redis.disconnect();
});

describe("workshop scenarios, real mode (Kafka, Redis, PostgreSQL)", () => {
  // The 14 runs at once: ~60 s one after another, each mostly waiting for Kafka and its timers.
  expectedOutcomeSuite(
    runner,
    120_000,
    async (name, runId, v, expect) => {
      expect(v.mode).toBe("real");
      // The run's keys were deleted: nothing of this run is left in the shared Redis.
      expect(await redis.keys(`${service}:dedup:${name}:${runId}:*`)).toEqual([]);
    },
    { concurrent: true },
  );
});
