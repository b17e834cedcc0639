import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { dedupRecorder } from "@/server/dedup";
import { embeddedSource } from "@/server/testing/embedded-source";
import { LocalSource } from "./local";

/** Drives the library's own recorder: `n` deliveries per tick, `dupShare` of them duplicates. */
function drive(rec: ReturnType<typeof dedupRecorder>, n: number, dupShare: number, checkSeconds: number) {
  for (let i = 0; i < n; i++) {
    rec.result("demo.events", "on-review-created", i < n * dupShare ? "deduplicated" : "success");
    rec.check("on-review-created", performance.now(), checkSeconds);
  }
}

describe("LocalSource", () => {
  it("computes the ratio, rates and p99 from the sampled registry, and runs the alert through pending to firing", async () => {
    const { rec, src, tick } = embeddedSource(1_000_000);
    await src.sample();
    /** `ticks` samples `stepMs` apart, each after `n` messages with `dupShare` duplicates. */
    const run = async (ticks: number, stepMs: number, n: number, dupShare: number) => {
      for (let i = 0; i < ticks; i++) {
        drive(rec, n, dupShare, 0.002);
        await tick(stepMs);
      }
    };
    await run(30, 1000, 100, 0.2);
    const [ratio] = await src.instant("duplicate_ratio");
    expect(ratio!.labels).toEqual({ service: "notification", topic: "demo.events", handler: "on-review-created" });
    expect(ratio!.value).toBeCloseTo(0.2, 6);
    const processed = await src.instant("processed_rate");
    const success = processed.find((s) => s.labels.result === "success")!.value!;
    expect(success).toBeCloseTo(80, 6);
    const [p99] = await src.instant("check_p99");
    expect(p99!.value!).toBeGreaterThan(0.001);
    expect(p99!.value!).toBeLessThanOrEqual(0.0025);

    let dup = (await src.alerts()).find((a) => a.alert === "DedupDuplicateRateHigh")!;
    expect(dup.state).toBe("pending");
    expect(dup.instances[0]!.labels.handler).toBe("on-review-created");
    expect((await src.alerts()).find((a) => a.alert === "DedupRedisLatencyHigh")!.state).toBe("inactive");

    // 10 more minutes of 20% duplicates: the alert's `for: 10m` has elapsed.
    await run(120, 5000, 500, 0.2);
    dup = (await src.alerts()).find((a) => a.alert === "DedupDuplicateRateHigh")!;
    expect(dup.state).toBe("firing");

    // Back to 0.5% duplicates: once the 5-min window holds only healthy traffic, the alert resolves.
    await run(80, 5000, 1000, 0.005);
    dup = (await src.alerts()).find((a) => a.alert === "DedupDuplicateRateHigh")!;
    expect(dup.state).toBe("inactive");
    expect(dup.instances).toEqual([]);
  });

  it("links each rule to its runbook section under the configured base (RUNBOOK_BASE_URL), the app's own /runbook by default", async () => {
    const own = await new LocalSource(new Registry(), { intervalMs: 1000 }).alerts();
    expect(own.map((r) => r.runbookUrl)).toEqual(own.map((r) => `/runbook#${r.alert.toLowerCase()}`));
    const wiki = await new LocalSource(new Registry(), {
      intervalMs: 1000,
      runbookBase: "https://wiki.example.com/dedup",
    }).alerts();
    expect(wiki.map((r) => r.runbookUrl)).toEqual(
      wiki.map((r) => `https://wiki.example.com/dedup#${r.alert.toLowerCase()}`),
    );
  });

  it("gives pending since, fires at and firing since from the sample (evaluation) times, as Prometheus does", async () => {
    const t0 = 2_000_000;
    // 25 s between evaluations and `for: 1m` for errors: fires at the third evaluation, 75 s after pending.
    const { rec, src, clock, tick } = embeddedSource(t0, { intervalMs: 25_000 });
    rec.error("marshal", "on-review-created"); // the series exists at the first sample, with or without start-up zeros
    await src.sample();
    rec.error("marshal", "on-review-created");
    await tick(25_000); // t0 + 25 s: the rate is above 0, pending
    const errOf = async () => (await src.alerts()).find((a) => a.alert === "DedupRedisErrors")!;
    let rule = await errOf();
    expect(rule.evaluationIntervalMs).toBe(25_000);
    let i = rule.instances.find((x) => x.labels.reason === "marshal")!;
    expect(i).toMatchObject({
      state: "pending",
      activeAt: new Date(t0 + 25_000).toISOString(),
      firesAt: new Date(t0 + 100_000).toISOString(),
      firingSince: null,
    });
    expect(i.summary).toBe("Records without a message UUID reaching notification: a publisher bug, sent to the DLQ");
    // Between evaluations the state does not change, even once activeAt + for has passed.
    clock.now = t0 + 90_000;
    expect((await errOf()).instances[0]!.state).toBe("pending");
    for (const t of [50_000, 75_000]) {
      clock.now = t0 + t;
      rec.error("marshal", "on-review-created");
      await src.sample();
    }
    expect((await errOf()).instances[0]!.state).toBe("pending"); // 50 s after activeAt < 1 min
    clock.now = t0 + 100_000;
    rec.error("marshal", "on-review-created");
    await src.sample();
    rule = await errOf();
    i = rule.instances[0]!;
    expect(i).toMatchObject({
      state: "firing",
      activeAt: new Date(t0 + 25_000).toISOString(),
      firingSince: new Date(t0 + 100_000).toISOString(),
      firesAt: null,
    });
  });

  it("answers the quiet since the last failed / slow check at the sample's own time (0 without a check after it) and the window's slow checks", async () => {
    // The moments are wall-clock: the source's clock starts at the real time.
    const { rec, src, tick } = embeddedSource(Date.now());
    const value = async (q: "error_quiet" | "slow_check_quiet" | "slow_check_rate") =>
      (await src.instant(q)).find((s) => s.labels.service === "notification")?.value;
    rec.check("on-review-created", performance.now(), 0.002);
    await src.sample();
    expect(await value("error_quiet")).toBeUndefined();
    for (let i = 0; i < 30; i++) rec.check("on-review-created", performance.now(), 0.2);
    rec.error("redis_conn", "on-review-created");
    await tick(2000);
    // The slow checks and the error are the newest moments: no check after them, no quiet.
    expect(await value("slow_check_quiet")).toBe(0);
    expect(await value("error_quiet")).toBe(0);
    expect(await value("slow_check_rate")).toBeCloseTo(30 / 2, 1);
    rec.check("on-other", performance.now(), 0.001); // a check of another handler of the service counts
    await tick(3000);
    expect(await value("error_quiet")).toBeCloseTo(5, 0);
    expect(await value("slow_check_quiet")).toBeCloseTo(5, 0);
  });

  it("keeps at most `capacity` samples and gives no points before its history starts", async () => {
    const { registry, src, tick } = embeddedSource(0, { capacity: 10 });
    for (let i = 0; i < 25; i++) await tick(1000);
    expect(src.size).toBe(10);
    expect(await src.range("processed_rate", -100, 0, 10)).toEqual([]);
    expect(() => new LocalSource(registry, { capacity: 5 })).toThrow(/capacity/);
  });
});
