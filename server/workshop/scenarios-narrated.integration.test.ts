import { randomBytes } from "node:crypto";
import { afterAll, describe } from "vitest";
import { NARRATED_MAX_RUN_MS } from "@/lib/api/workshop";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { scenarioEnv } from "./env";
import { expectedOutcomeSuite } from "./scenarios.suite";
import { WorkshopRunner } from "./workshop";

/**
 * Real mode at the narrated pace (one message every 0.25 s): every scenario still meets the outcome
 * it declares on Kafka, Redis and PostgreSQL, and ends within the narrated bound of 2 minutes.
 */
const service = `wsnarr${randomBytes(3).toString("hex")}`;
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

describe("workshop scenarios at the narrated pace, real mode (Kafka, Redis, PostgreSQL)", () => {
  expectedOutcomeSuite(
    runner,
    NARRATED_MAX_RUN_MS + 20_000,
    (name, _runId, v, expect) => {
      expect(v.mode).toBe("real");
      const ms = Date.parse(v.finishedAt!) - Date.parse(v.startedAt);
      console.log(`narrated real ${name}: ${(ms / 1000).toFixed(1)} s, ${v.summary.published} published`);
      expect(ms).toBeLessThanOrEqual(NARRATED_MAX_RUN_MS);
    },
    { concurrent: true, pace: "narrated" },
  );
});
