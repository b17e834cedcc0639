import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { replicaRole } from "@/server/replicas/leader";
import { registerObserveGauge } from "./observe-gauge";

type G = typeof globalThis & { __dedupHealthLeader?: unknown };

/** This process as one replica of a fleet with the given role (what the election on PostgreSQL sets). */
function actAs(role: "leader" | "follower"): void {
  (globalThis as G).__dedupHealthLeader = { current: () => role };
}

afterEach(() => {
  delete (globalThis as G).__dedupHealthLeader;
});

describe("the scrape-time gauges are exported by the fleet's leader only", () => {
  it("a follower exports the gauge empty and never reads; the leader and a single replica export the figure", async () => {
    const registry = new Registry();
    let reads = 0;
    registerObserveGauge(registry, "dlqOldestOpenAge", "test", async () => {
      reads++;
      return [{ labels: { topic: "he-t" }, value: 42 }];
    });
    const values = async () =>
      (await registry.getSingleMetric("dedup_dlq_oldest_open_age_seconds")!.get()).values.map((v) => v.value);
    expect(replicaRole()).toBe("single");
    expect(await values()).toEqual([42]);
    actAs("follower");
    expect(await values()).toEqual([]);
    expect(reads).toBe(1);
    actAs("leader");
    expect(await values()).toEqual([42]);
    expect(reads).toBe(2);
  });
});
