import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import type { GroupSnapshot, PartitionOffsets } from "../kafka/consumer-group";
import { eventsBetween } from "../shared/events";
import { LagMetrics } from "./lag-metrics";

const offsets: PartitionOffsets[] = [
  { partition: 0, low: 0, high: 10 },
  { partition: 1, low: 0, high: 10 },
];

function group(id: string, members: Array<[string, number[]]>): GroupSnapshot {
  return {
    groupId: id,
    state: "Stable",
    protocol: "RoundRobinAssigner",
    members: members.map(([memberId, partitions]) => ({ memberId, clientId: memberId, host: "127.0.0.1", partitions })),
    committed: new Map([
      [0, 5],
      [1, null],
    ]),
  };
}

async function counter(registry: Registry, g: string): Promise<number | undefined> {
  return (await registry.getSingleMetric(KAFKA_METRIC_NAMES.rebalances)!.get()).values.find(
    (v) => v.labels.consumergroup === g,
  )?.value;
}

describe("LagMetrics", () => {
  it("counts a rebalance when a group's members or assignment change between reads, records it as an event, and reads once per scrape", async () => {
    const registry = new Registry();
    const id = `g-${Math.random().toString(36).slice(2)}`;
    let current = group(id, [["m1", [0, 1]]]);
    let reads = 0;
    new LagMetrics(
      registry,
      () => ["t"],
      async () => {
        reads++;
        return { offsets, groups: [current] };
      },
    );
    const since = Date.now();
    await registry.metrics();
    expect(reads).toBe(1); // seven metrics, one read
    expect(await counter(registry, id)).toBe(0);
    await registry.metrics();
    expect(await counter(registry, id)).toBe(0); // same assignment: no rebalance
    current = group(id, [
      ["m1", [0]],
      ["m2", [1]],
    ]);
    await registry.metrics();
    expect(await counter(registry, id)).toBe(1);
    const ev = (await eventsBetween(since, Date.now())).filter((e) => e.labels.consumergroup === id);
    expect(ev.map((e) => [e.kind, e.title])).toEqual([["rebalance", `Rebalance of ${id}: 1 → 2 members`]]);
    const lag = (await registry.getSingleMetric(KAFKA_METRIC_NAMES.lag)!.get()).values.map((v) => [
      v.labels.partition,
      v.value,
    ]);
    expect(lag).toEqual([
      ["0", 5],
      ["1", 10],
    ]);
  });

  it("a failed read leaves the gauges empty rather than stale", async () => {
    const registry = new Registry();
    let fail = false;
    new LagMetrics(
      registry,
      () => ["t"],
      async () => {
        if (fail) throw new Error("kafka down");
        return { offsets, groups: [group("g", [["m1", [0, 1]]])] };
      },
    );
    await registry.metrics();
    expect((await registry.getSingleMetric(KAFKA_METRIC_NAMES.lag)!.get()).values).toHaveLength(2);
    fail = true;
    await registry.metrics();
    expect((await registry.getSingleMetric(KAFKA_METRIC_NAMES.lag)!.get()).values).toHaveLength(0);
  });
});
