import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryRepository, dedupMetrics } from "@/server/dedup";
import { EVENT_TYPE_KEY } from "@/names/dedup";
import { DEMO_HANDLER_SPECS } from "@/server/notification/demo-handlers";
import { countPush, MemorySideEffectStore, sideEffectCounters } from "@/server/notification/side-effects";
import { MemoryTransport } from "@/server/transport";
import { BackgroundDuplicates } from "./background-duplicates";
import { DemoService } from "./demo";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let demo: DemoService | null = null;
afterEach(async () => {
  await demo?.stop();
  demo = null;
});

type C = { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> };
const sum = async (c: C, f: (l: Record<string, unknown>) => boolean = () => true) =>
  (await c.get()).values.filter((v) => f(v.labels)).reduce((a, v) => a + v.value, 0);

function embedded(ratePerSec: number) {
  const registry = new Registry();
  const counters = sideEffectCounters(registry);
  const store = new MemorySideEffectStore((handler, _id, r) => countPush(counters, handler, r));
  demo = new DemoService({
    transport: new MemoryTransport(),
    repository: new MemoryRepository(),
    store,
    service: "notification",
    registry,
    ratePerSec,
    commitIntervalMs: 500,
  });
  return { demo, m: dedupMetrics(registry), counters };
}

async function ratios(m: ReturnType<typeof dedupMetrics>) {
  const processed = await sum(m.processed);
  const dup = await sum(m.deduplicated);
  const per = new Map<string, number>();
  for (const h of DEMO_HANDLER_SPECS) {
    const p = await sum(m.processed, (l) => l.handler === h.name);
    per.set(h.name, p > 0 ? (await sum(m.deduplicated, (l) => l.handler === h.name)) / p : 0);
  }
  return { processed, dup, ratio: processed > 0 ? dup / processed : 0, per };
}

describe("BackgroundDuplicates", () => {
  it("re-sends one record of an event type after 120 of its messages, then one in 200-400: under 1 % at every point", () => {
    const bg = new BackgroundDuplicates({}, () => 0.5);
    const msg = (type: string) => ({
      uuid: "u",
      metadata: { [EVENT_TYPE_KEY]: type },
      payload: Buffer.from("x"),
      signal: new AbortController().signal,
      context: {},
    });
    let sent = 0;
    let again = 0;
    for (let i = 0; i < 5000; i++) {
      sent++;
      again += bg.retries([msg("a")]).length;
      if (again > 0) expect(again / (sent + again)).toBeLessThan(0.01);
      if (i === 118) expect(again).toBe(0);
      if (i === 119) expect(again).toBe(1);
    }
    expect(again).toBe(1 + Math.floor((5000 - 120) / 300));
    expect(bg.retries([msg("b")])).toHaveLength(0); // counted per event type
  });
});

describe("embedded demo, no toggle touched (time-compressed: 100 msgs/s ≈ 100 s of the default 5 msgs/s in 5 s)", () => {
  it("carries a duplicate ratio > 0 and < 1 %, every handler < 1 %, by producer retries (cause republish); no push twice", async () => {
    const { demo, m, counters } = embedded(100);
    await demo.start();
    await sleep(5000);
    demo.setSources({ traffic: { enabled: false } });
    await sleep(1500);
    const r = await ratios(m);
    expect(r.processed).toBeGreaterThan(300);
    expect(r.ratio, `${r.dup} of ${r.processed}`).toBeGreaterThan(0);
    expect(r.ratio).toBeLessThan(0.01);
    for (const [h, x] of r.per) expect(x, h).toBeLessThan(0.01);
    expect(await sum(m.duplicatesByCause, (l) => l.cause === "republish")).toBe(r.dup);
    expect(await sum(counters.duplicate)).toBe(0);
  }, 20_000);

  it("the workshop's forwarder toggle still pushes the ratio past the 10 % line", async () => {
    const { demo, m } = embedded(100);
    await demo.start();
    demo.setSources({ forwarderRepublish: { enabled: true, rate: 0.25, delayMs: 200 } });
    await sleep(3000);
    demo.setSources({ traffic: { enabled: false } });
    await sleep(1000);
    expect((await ratios(m)).ratio).toBeGreaterThan(0.1);
  }, 20_000);

  it("is off when asked (backgroundDuplicates: false): no duplicate at all", async () => {
    const registry = new Registry();
    demo = new DemoService({
      transport: new MemoryTransport(),
      repository: new MemoryRepository(),
      store: new MemorySideEffectStore(() => {}),
      service: "notification",
      registry,
      ratePerSec: 100,
      backgroundDuplicates: false,
    });
    await demo.start();
    await sleep(3000);
    expect(await sum(dedupMetrics(registry).deduplicated)).toBe(0);
  }, 20_000);
});
