import { Registry, type Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import { CONTRACT_VERSION, HANDLER_INFO_LABELS, HANDLER_INFO_METRIC } from "../../../names/contract";
import { STACK_ORDER } from "../../../names/stack";
import { failClosed } from "../repository/failure-mode";
import { MemoryRepository } from "../repository/memory-repository";
import { MemoryPubSub } from "../pubsub";
import { Router } from "../router/router";
import { defaultStack } from "../stack";

/** The series of `dedup_handler_info` on `registry`, as a scrape would list them. */
async function infoSeries(
  registry: Registry,
): Promise<Array<{ labels: Record<string, string | number>; value: number }>> {
  const g = registry.getSingleMetric(HANDLER_INFO_METRIC) as Gauge | undefined;
  return g
    ? (await g.get()).values.map((v) => ({
        labels: { ...v.labels } as Record<string, string | number>,
        value: v.value,
      }))
    : [];
}

describe("dedup_handler_info", () => {
  it("is exported once per handler a Router registers, with every declared field of docs/CONTRACT.md", async () => {
    const ps = new MemoryPubSub();
    const registry = new Registry();
    const router = new Router();
    const stack = defaultStack({
      dlqPublisher: ps,
      dlqTopic: "orders.dlq",
      dedup: {
        repository: failClosed(new MemoryRepository()),
        service: "billing",
        registry,
        ttlMs: 7 * 86_400_000,
        leaseMs: 45_000,
        heartbeat: true,
      },
      timeoutMs: 20_000,
      ttlClass: "critical",
      group: "billing-workers",
      sideEffects: ["postgres", "kafka"],
    });
    router.use(...stack);
    router.addHandler({ name: "charge", topic: "orders", subscriber: ps, handler: async () => undefined });
    router.addHandler({ name: "refund", topic: "refunds", subscriber: ps, handler: async () => undefined });

    const series = await infoSeries(registry);
    expect(series).toHaveLength(2);
    expect(series.every((s) => s.value === 1)).toBe(true);
    expect(series.find((s) => s.labels.handler === "charge")?.labels).toEqual({
      service: "billing",
      handler: "charge",
      topic: "orders",
      group: "billing-workers",
      prefix: "billing:dedup:charge",
      ttl_ms: "604800000",
      ttl_class: "critical",
      lease_ms: "45000",
      timeout_ms: "20000",
      marking: "lease",
      failure_mode: "closed",
      stack: [...STACK_ORDER, "timeout", "handlerTimer"].join(","),
      runtime: "node",
      contract: CONTRACT_VERSION,
      repository: "memory",
      heartbeat: "on",
      side_effects: "postgres,kafka",
      mode: "memory",
    });
    expect(series.find((s) => s.labels.handler === "refund")?.labels).toMatchObject({
      topic: "refunds",
      prefix: "billing:dedup:refund",
    });
    // Every label is a name of the contract.
    for (const s of series) for (const k of Object.keys(s.labels)) expect(HANDLER_INFO_LABELS).toContain(k);
  });

  it("leaves out what is not declared: no class, no lease under the note's marking, no attempt limit; the group defaults to <service>.<handler>", async () => {
    const ps = new MemoryPubSub();
    const registry = new Registry();
    const router = new Router();
    router.addHandler({
      name: "notify",
      topic: "events",
      subscriber: ps,
      handler: async () => undefined,
      middleware: defaultStack({
        dlqPublisher: ps,
        dlqTopic: "events.dlq",
        dedup: { repository: new MemoryRepository(), service: "note", registry, marking: "naive" },
      }),
    });
    const [only, ...rest] = await infoSeries(registry);
    expect(rest).toEqual([]);
    expect(only?.labels).toMatchObject({
      group: "note.notify",
      marking: "before",
      failure_mode: "open",
      ttl_ms: "86400000",
    });
    expect(only?.labels).not.toHaveProperty("ttl_class");
    expect(only?.labels).not.toHaveProperty("lease_ms");
    expect(only?.labels).not.toHaveProperty("timeout_ms");
    // Side effects not declared: the label is absent ("not known"), never "none".
    expect(only?.labels).not.toHaveProperty("side_effects");
    expect(only?.labels).toMatchObject({ heartbeat: "off", mode: "memory" });
  });

  it("a stack without a registry exports nothing (no metrics at all), and registering the same handler again keeps one series", async () => {
    const ps = new MemoryPubSub();
    const bare = new Registry();
    new Router().addHandler({
      name: "h",
      topic: "t",
      subscriber: ps,
      handler: async () => undefined,
      middleware: defaultStack({ dlqPublisher: ps, dlqTopic: "t.dlq", dedup: { repository: new MemoryRepository() } }),
    });
    expect(await infoSeries(bare)).toEqual([]);

    const registry = new Registry();
    for (const ttlMs of [3_600_000, 7_200_000]) {
      new Router().addHandler({
        name: "h",
        topic: "t",
        subscriber: ps,
        handler: async () => undefined,
        middleware: defaultStack({
          dlqPublisher: ps,
          dlqTopic: "t.dlq",
          dedup: { repository: new MemoryRepository(), service: "s", registry, ttlMs },
        }),
      });
    }
    const series = await infoSeries(registry);
    expect(series.map((s) => s.labels.ttl_ms)).toEqual(["7200000"]);
  });
});
