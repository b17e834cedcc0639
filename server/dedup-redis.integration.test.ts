import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDedupRedis, type RedisClient } from "@/server/dedup-redis";
import { deduplicator, failOpen, newMessage, RedisRepository, type Handler } from "@/server/dedup";
import { METRIC_NAMES } from "@/names/dedup";
import { observationCount } from "@/server/testing/histogram";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";

/** Holds the event loop for `ms` (a saturated consumer: timers and socket events run late). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* spin */
  }
}

async function counter(registry: Registry, name: string, label: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await registry.getSingleMetric(name)!.get()).values) {
    const k = String(v.labels[label] ?? "");
    out[k] = (out[k] ?? 0) + v.value;
  }
  return out;
}

const checkCount = (registry: Registry) => observationCount(registry, METRIC_NAMES.checkDuration);

describe("the consumer's Redis client: a Redis stopped mid-traffic on a saturated event loop", () => {
  let redis: OwnRedis;
  let client: RedisClient;

  beforeAll(async () => {
    redis = await startOwnRedis();
    client = createDedupRedis({ url: redis.url }, "outage-test");
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it("counts ≥ 99 % of the failed checks as redis_conn, none of them as a latency sample, and every message that ran unchecked", async () => {
    const registry = new Registry();
    const prefix = `outage-${Math.random().toString(36).slice(2, 8)}`;
    const ran: string[] = [];
    const inner: Handler = async (m) => void ran.push(m.uuid);
    // The check timeout (100 ms) is shorter than one busy block (150 ms): timers fire late, after the
    // socket already closed; only the connection state can tell the outage from a slow Redis.
    const h = deduplicator({
      repository: failOpen(new RedisRepository(client)),
      service: prefix,
      prefix,
      registry,
      timeoutMs: 100,
    })(inner);
    const load = setInterval(() => busy(150), 200);
    let n = 0;
    const wave = () =>
      Promise.all(
        Array.from({ length: 20 }, () =>
          h(Object.assign(newMessage(`${prefix}-${n++}`, ""), { context: { handler: "h", topic: "t" } })),
        ),
      );
    try {
      const until = (ms: number) => performance.now() + ms;
      for (const end = until(1_000); performance.now() < end;) await wave();
      const okChecks = await checkCount(registry);
      expect(okChecks).toBeGreaterThan(0);
      // A check that timed out on the loaded loop before the stop also ran unchecked: count from here.
      const sum = (c: Record<string, number>) => (c.redis_conn ?? 0) + (c.redis_timeout ?? 0);
      const uncheckedBefore = sum(await counter(registry, METRIC_NAMES.unchecked, "reason"));
      const errorsBefore = sum(await counter(registry, METRIC_NAMES.errors, "reason"));
      const ranBefore = n;
      await redis.stop();
      for (const end = until(3_000); performance.now() < end;) await wave();
      const errors = await counter(registry, METRIC_NAMES.errors, "reason");
      const failed = (errors.redis_conn ?? 0) + (errors.redis_timeout ?? 0);
      expect(failed).toBeGreaterThan(100);
      expect((errors.redis_conn ?? 0) / failed).toBeGreaterThanOrEqual(0.99);
      // Fail-open: every message ran; the outage added no check-duration samples beyond timeouts.
      expect(ran.length).toBe(n);
      // …and each of them ran without a check, counted as such, by the same reason as the error.
      const unchecked = await counter(registry, METRIC_NAMES.unchecked, "reason");
      expect(sum(unchecked) - uncheckedBefore).toBe(n - ranBefore);
      expect(sum(unchecked) - uncheckedBefore).toBe(failed - errorsBefore);
      expect(await checkCount(registry)).toBeLessThanOrEqual(okChecks + (errors.redis_timeout ?? 0));
    } finally {
      clearInterval(load);
    }
  }, 30_000);
});
