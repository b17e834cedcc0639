import { describe, expect, it } from "vitest";
import { fleetId, fleetLockKey } from "./fleet";

const base = {
  REDIS_URL: "redis://r:6379",
  KAFKA_BROKERS: ["k1:9092", "k2:9092"],
  CONSUMER_TOPICS: ["a", "b"],
  DEDUP_PREFIXES: ["*:dedup:*"],
  SERVICE_NAME: "notification",
  DEMO_TOPIC: "demo.events",
};

describe("which replicas are one fleet (one leader, one set of saved baselines)", () => {
  it("replicas with the same configuration agree, whatever the order of their lists", () => {
    expect(fleetId({ ...base, KAFKA_BROKERS: ["k2:9092", "k1:9092"], CONSUMER_TOPICS: ["b", "a"] })).toBe(
      fleetId(base),
    );
  });

  it("a dashboard watching another store, cluster or service is another fleet with another lock", () => {
    const others = [
      { REDIS_URL: "redis://other:6379" },
      { KAFKA_BROKERS: ["k3:9092"] },
      { CONSUMER_TOPICS: ["a"] },
      { SERVICE_NAME: "billing" },
      { DEDUP_PREFIXES: ["billing:dedup:*"] },
    ];
    const ids = new Set([fleetId(base), ...others.map((o) => fleetId({ ...base, ...o }))]);
    expect(ids.size).toBe(others.length + 1);
    expect(new Set([...ids].map(fleetLockKey)).size).toBe(ids.size);
  });

  it("keeps no setting in clear and gives a 32-bit lock key", () => {
    const id = fleetId({ ...base, REDIS_URL: "redis://:s3cret@r:6379" });
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(fleetLockKey(id)).toBeGreaterThanOrEqual(0);
    expect(fleetLockKey(id)).toBeLessThanOrEqual(0x7fffffff);
  });
});
