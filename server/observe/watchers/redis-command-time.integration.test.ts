import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCommandStats, startRedisCommandTime, usecPerCall } from "./redis-command-time";
import { REDIS_COMMAND_TIME_METRIC } from "@/names/observe";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";

describe("Redis' own time per dedup command (INFO commandstats)", () => {
  it("parses the reply and takes the per-call time between two samples, a restart counting from zero", () => {
    const a = parseCommandStats(
      "# Commandstats\r\ncmdstat_set:calls=10,usec=50,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n",
    );
    const b = parseCommandStats(
      "cmdstat_set:calls=30,usec=250,usec_per_call=8.33\r\ncmdstat_evalsha:calls=4,usec=40,usec_per_call=10\r\n",
    );
    expect(usecPerCall(a, b, "set")).toBe(10);
    expect(usecPerCall(a, b, "evalsha")).toBe(10);
    expect(usecPerCall(b, a, "set")).toBe(5);
    expect(usecPerCall(a, a, "set")).toBeUndefined();
  });

  let redis: OwnRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startOwnRedis();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it("exports the gauge for SET from an own redis-server, and no figure for a command not called", async () => {
    const registry = new Registry();
    const stop = startRedisCommandTime(client, registry, 200);
    try {
      await new Promise((r) => setTimeout(r, 100));
      for (let i = 0; i < 200; i++) await client.set(`k${i}`, "v", "PX", 60_000, "NX");
      let values: Array<{ labels: Partial<Record<string, string | number>>; value: number }> = [];
      for (let i = 0; i < 30 && !values.some((v) => v.labels.command === "set"); i++) {
        await new Promise((r) => setTimeout(r, 100));
        values = (await registry.getSingleMetric(REDIS_COMMAND_TIME_METRIC)!.get()).values;
      }
      const set = values.find((v) => v.labels.command === "set");
      expect(set?.value).toBeGreaterThan(0);
      expect(set!.value).toBeLessThan(1000);
      expect(values.some((v) => v.labels.command === "del")).toBe(false);
    } finally {
      stop();
    }
  });
});
