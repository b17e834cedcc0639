/**
 * The growing-lag alert evaluated without Prometheus (LocalSource sampling the app's registry, as
 * real mode without PROMETHEUS_URL does): the consumer-group gauges LagMetrics exports from a
 * stopped group whose topic keeps receiving messages make DedupConsumerLagGrowing pend once the
 * lag passes the floor and fire after `for`; a group with a high but flat lag and a group growing
 * below the floor never do — the same cases as the promtool test.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ALERTS } from "@/lib/thresholds";
import { LAG_GROWTH_FLOOR } from "@/lib/alert-exprs";
import type { GroupSnapshot } from "../kafka/consumer-group";
import { LagMetrics } from "../watchers/lag-metrics";
import { LocalSource } from "./local";

const MINUTE = 60_000;

function stoppedGroup(groupId: string, committed: number): GroupSnapshot {
  return { groupId, state: "Empty", protocol: "", members: [], committed: new Map([[0, committed]]) };
}

describe("DedupConsumerLagGrowing in embedded evaluation", () => {
  it("pends when a stopped group's lag grows past the floor, fires after for, and leaves flat and small lags alone", async () => {
    const registry = new Registry();
    let minute = 0;
    // Stopped groups: t1 gets 20 new messages a minute, t2 none (a lag of 500 that stays), t3 gets 2 a minute.
    const topics: Record<string, { high: () => number; group: GroupSnapshot }> = {
      t1: { high: () => 1000 + 20 * minute, group: stoppedGroup("svc.growing", 1000) },
      t2: { high: () => 900, group: stoppedGroup("svc.flat", 400) },
      t3: { high: () => 2 * minute, group: stoppedGroup("svc.small", 0) },
    };
    new LagMetrics(
      registry,
      () => Object.keys(topics),
      async (topic) => ({
        offsets: [{ partition: 0, low: 0, high: topics[topic]!.high() }],
        groups: [topics[topic]!.group],
      }),
    );
    let now = 1_000_000_000;
    const src = new LocalSource(registry, { intervalMs: MINUTE }, () => now);
    const alert = async () => (await src.alerts()).find((a) => a.alert === ALERTS.consumerLagGrowing.name)!;
    const states: string[] = [];
    for (; minute <= 20; minute++) {
      await src.sample();
      states.push((await alert()).state);
      now += MINUTE;
    }
    // svc.growing: lag 20·m, above the floor (100) from minute 6; pending there, firing 10 min later.
    expect(states.indexOf("pending")).toBe(LAG_GROWTH_FLOOR / 20 + 1);
    expect(states.indexOf("firing")).toBe(LAG_GROWTH_FLOOR / 20 + 11);
    const a = await alert();
    expect(a.instances.map((i) => i.labels)).toEqual([{ service: "svc", handler: "growing", topic: "t1" }]);
    expect(a.instances[0]!.value).toBeCloseTo(20 / 60, 6);
    expect(a.instances[0]!.summary).toBe("Consumer lag of svc/growing keeps growing on t1");
    // The lag query itself still reports all three groups' lag.
    const lags = Object.fromEntries((await src.instant("consumer_lag")).map((s) => [s.labels.handler, s.value]));
    expect(lags).toEqual({ growing: 400, flat: 500, small: 40 });
  });
});
