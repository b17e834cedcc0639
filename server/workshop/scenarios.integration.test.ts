import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { SCENARIO_NAMES } from "@/lib/workshop-types";
import { scenarioEnv } from "./env";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { WorkshopRunner } from "./workshop";

/**
 * Real mode: every scenario on Kafka (127.0.0.1:9092, its own topic and group per run), Redis
 * (a random key service per test file, keys deleted after each run) and PostgreSQL (a schema per
 * run, dropped after). Each summary must meet the outcome the scenario declares.
 */
const service = `wstest${randomBytes(3).toString("hex")}`;
const redis = createDedupRedis({ url: "redis://127.0.0.1:6379" });
const env = scenarioEnv({ kafkaBrokers: ["127.0.0.1:9092"], redis, databaseUrl: "postgres://postgres@127.0.0.1:5432/test", service });
const runner = new WorkshopRunner(() => env);

afterAll(async () => {
  await deleteKeysByPrefix(redis, `${service}:dedup`);
  await env.close();
  redis.disconnect();
});

describe("workshop scenarios, real mode (Kafka, Redis, PostgreSQL)", () => {
  for (const name of SCENARIO_NAMES) {
    it(`${name}: summary meets the declared expected outcome`, async () => {
      const runId = runner.start(name);
      const v = await runner.wait(runId);
      expect(v.error).toBeNull();
      expect(v.mode).toBe("real");
      const failed = v.outcome!.checks.filter((c) => !c.ok);
      expect(failed, JSON.stringify(v.summary)).toEqual([]);
      // The run's keys were deleted: nothing of this run is left in the shared Redis.
      expect(await redis.keys(`${service}:dedup:${name}:${runId}:*`)).toEqual([]);
    }, 120_000);
  }
});
