import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { lintHandler, MemoryRepository, dedupMetrics } from "@/server/dedup";
import { hostname } from "node:os";
import { EVENT_TYPE_KEY, HANDLER_POISONED_KEY, REASON_POISONED_KEY, SUBSCRIBER_POISONED_KEY } from "@/names/dedup";
import { DemoService } from "./demo";
import { CONSUMER_INFO_METRIC } from "@/names/observe";
import { DEMO_HANDLERS } from "@/server/notification/demo-handlers";
import { countPush, MemorySideEffectStore, sideEffectCounters } from "@/server/notification/side-effects";
import { MemoryTransport } from "@/server/transport";

/** The live demo in embedded mode: each duplicate source really produces repeats, and none leaks. */
let demo: DemoService | null = null;
afterEach(async () => {
  await demo?.stop();
  demo = null;
});

function setup(ratePerSec: number) {
  const registry = new Registry();
  const counters = sideEffectCounters(registry);
  const store = new MemorySideEffectStore((handler, _id, r) => countPush(counters, handler, r));
  const transport = new MemoryTransport();
  demo = new DemoService({
    transport,
    repository: new MemoryRepository(),
    store,
    service: "notification",
    registry,
    ratePerSec,
    commitIntervalMs: 500,
  });
  const total = async (
    c: { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> },
    filter: (l: Record<string, unknown>) => boolean = () => true,
  ) => (await c.get()).values.filter((v) => filter(v.labels)).reduce((a, v) => a + v.value, 0);
  const m = dedupMetrics(registry);
  return { demo, transport, counters, m, total, registry };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("live demo (embedded)", () => {
  it("declares setups that pass the library lint (one handler per TTL class)", () => {
    expect(DEMO_HANDLERS.map((h) => [h.handler, h.ttlClass, h.failureMode])).toEqual([
      ["on-review-created", "default", "open"],
      ["on-user-banned", "critical", "closed"],
      ["on-page-viewed", "analytics", "open"],
    ]);
    for (const h of DEMO_HANDLERS)
      expect(
        lintHandler(h).filter((f) => f.severity !== "info"),
        h.handler,
      ).toEqual([]);
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

  it("a record without a UUID goes to its owner's DLQ with handler_poisoned set and counts as messages_poisoned_total{reason_poisoned=marshal}", async () => {
    const { demo, transport, m, total } = setup(0);
    await demo.start();
    await transport.produceRaw("demo.events", {
      headers: { [EVENT_TYPE_KEY]: "user.banned" },
      value: Buffer.from("{}"),
    });
    await transport.produceRaw("demo.events", { headers: {}, value: Buffer.from("{}") });
    const end = Date.now() + 10_000;
    while ((await transport.readAll("demo.events.dlq")).length < 2 && Date.now() < end) await sleep(50);
    const dlq = await transport.readAll("demo.events.dlq");
    expect(dlq.map((d) => d.metadata[HANDLER_POISONED_KEY]).sort()).toEqual(["on-review-created", "on-user-banned"]);
    expect(dlq.every((d) => d.metadata[REASON_POISONED_KEY]?.startsWith("marshal"))).toBe(true);
    const marshal = (handler: string) =>
      total(m.poisoned, (l) => l.handler === handler && l.reason_poisoned === "marshal" && l.topic === "demo.events");
    expect(await marshal("on-user-banned")).toBe(1);
    expect(await marshal("on-review-created")).toBe(1);
    expect(await total(m.poisoned)).toBe(2);
  }, 20_000);

  it("replicas are named <hostname>-<pid> (extra ones -r<n>), in DLQ headers and in dedup_consumer_info while they run", async () => {
    const { demo, transport, registry } = setup(0);
    const id = `${hostname()}-${process.pid}`;
    await demo.start();
    await transport.produceRaw("demo.events", {
      headers: { [EVENT_TYPE_KEY]: "page.viewed" },
      value: Buffer.from("{}"),
    });
    const end = Date.now() + 10_000;
    while ((await transport.readAll("demo.events.dlq")).length < 1 && Date.now() < end) await sleep(50);
    expect((await transport.readAll("demo.events.dlq"))[0]?.metadata[SUBSCRIBER_POISONED_KEY]).toBe(`memory/${id}`);
    demo.setSources({ rebalance: { enabled: true, replicas: 1, periodMs: 2000 } });
    const info = async () =>
      ((await registry.getSingleMetric(CONSUMER_INFO_METRIC)?.get())?.values ?? [])
        .map((v) => `${v.labels.service}/${v.labels.replica}=${v.value}`)
        .sort();
    const until = Date.now() + 5000;
    while ((await info()).length < 2 && Date.now() < until) await sleep(100);
    expect(await info()).toEqual([`notification/${id}-r1=1`, `notification/${id}=1`].sort());
    await demo.stop();
    expect(await info()).toEqual([]);
  }, 20_000);
});
