import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { lintHandler } from "@/server/dedup/lint";
import { MemoryRepository } from "@/server/dedup/memory-repository";
import { dedupMetrics } from "@/server/dedup/metrics";
import { DemoService } from "./demo";
import { DEMO_HANDLERS } from "./demo-handlers";
import { MemorySideEffectStore, sideEffectCounters } from "./side-effects";
import { MemoryTransport } from "./transport";

/** The live demo in embedded mode: each duplicate source really produces repeats, and none leaks. */
let demo: DemoService | null = null;
afterEach(async () => {
  await demo?.stop();
  demo = null;
});

function setup(ratePerSec: number) {
  const registry = new Registry();
  const counters = sideEffectCounters(registry);
  const store = new MemorySideEffectStore((handler, _id, r) => {
    counters.sent.inc({ handler });
    if (r.duplicate) counters.duplicate.inc({ handler });
  });
  const transport = new MemoryTransport();
  demo = new DemoService({ transport, repository: new MemoryRepository(), store, service: "notification", registry, ratePerSec, commitIntervalMs: 500 });
  const total = async (c: { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> }, filter: (l: Record<string, unknown>) => boolean = () => true) =>
    (await c.get()).values.filter((v) => filter(v.labels)).reduce((a, v) => a + v.value, 0);
  const m = dedupMetrics(registry);
  return { demo, transport, counters, m, total };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("live demo (embedded)", () => {
  it("declares setups that pass the library lint (one handler per TTL class)", () => {
    expect(DEMO_HANDLERS.map((h) => [h.handler, h.ttlClass, h.failureMode])).toEqual([
      ["on-review-created", "default", "open"],
      ["on-user-banned", "critical", "closed"],
      ["on-page-viewed", "analytics", "open"],
    ]);
    for (const h of DEMO_HANDLERS) expect(lintHandler(h).filter((f) => f.severity !== "info"), h.handler).toEqual([]);
  });

  it("with all four duplicate sources on, repeats are deduplicated and no push is sent twice", async () => {
    const { demo, counters, m, total } = setup(100);
    await demo.start();
    demo.setSources({
      retryOnError: { enabled: true, rate: 0.2 },
      forwarderRepublish: { enabled: true, rate: 0.2, delayMs: 300 },
      rebalance: { enabled: true, replicas: 1, periodMs: 2000 },
      restartBeforeCommit: { enabled: true, periodMs: 2000 },
    });
    await sleep(5000);
    demo.setSources({ traffic: { enabled: false } });
    await sleep(1500);
    const sent = await total(counters.sent);
    expect(sent).toBeGreaterThan(200);
    expect(await total(counters.duplicate)).toBe(0);
    expect(await total(m.deduplicated)).toBeGreaterThan(20);
    expect(await total(m.released)).toBeGreaterThan(0); // failed attempts released their keys for the retry
    expect(demo.handlerSetups()[0]!.repository).toBe("memory");
  }, 20_000);

  it("store faults: errors drive deduplication_errors_total; the fail-closed handler sends what outlasts Retry to the DLQ", async () => {
    const { demo, transport, m, total } = setup(50);
    await demo.start();
    demo.setFaults({ errorRate: 1, latencyMs: 5 });
    expect(demo.getFaults()).toMatchObject({ errorRate: 1, latencyMs: 5, redisCutoff: { available: false } });
    const end = Date.now() + 15_000;
    while ((await transport.readAll("demo.events.dlq")).length === 0 && Date.now() < end) await sleep(200);
    expect(await total(m.errors, (l) => l.reason === "redis_conn")).toBeGreaterThan(10);
    demo.setFaults({ errorRate: 0, latencyMs: 0 });
    const dlq = await transport.readAll("demo.events.dlq");
    expect(dlq.length).toBeGreaterThan(0);
    expect(dlq.every((d) => d.metadata["handler_poisoned"] === "on-user-banned")).toBe(true);
  }, 30_000);
});
