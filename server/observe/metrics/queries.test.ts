import { describe, expect, it } from "vitest";
import { dedupMetrics } from "@/server/dedup";
import { DUPLICATE_CAUSES, METRIC_NAMES } from "@/names/dedup";
import { ALERT_LIST } from "@/lib/thresholds";
import { embeddedSource } from "@/server/testing/embedded-source";
import { DUPLICATES_BY_CAUSE_METRIC } from "@/lib/query-exprs";
import { PROMQL } from "@/lib/named-queries";

describe("alert queries", () => {
  it("each alert's value is the PromQL of its named query, so the embedded evaluator and Prometheus compute the same thing", () => {
    for (const a of ALERT_LIST) expect(PROMQL[a.query], a.name).toBe(a.valueExpr);
  });
});

describe("duplicates by cause", () => {
  it("the dashboard's metric name is the library's", () => {
    expect(DUPLICATES_BY_CAUSE_METRIC).toBe(METRIC_NAMES.duplicatesByCause);
    expect(PROMQL.duplicates_by_cause).toBe(
      `sum by (service, handler, cause) (rate(${METRIC_NAMES.duplicatesByCause}[5m]))`,
    );
  });

  it("embedded mode answers the named query per cause from the sampled registry", async () => {
    const { rec, src, tick } = embeddedSource(5_000_000);
    rec.register("demo.events", "on-review-created");
    await src.sample();
    for (let second = 0; second < 10; second++) {
      // Per second: 3 redeliveries, 1 republish.
      for (let i = 0; i < 4; i++) {
        rec.result("demo.events", "on-review-created", "deduplicated");
        rec.duplicate("demo.events", "on-review-created", i < 3 ? "redelivery" : "republish");
      }
      await tick(1000);
    }
    const got = await src.instant("duplicates_by_cause");
    const by = Object.fromEntries(got.map((s) => [s.labels.cause, s.value]));
    expect(Object.keys(by).sort()).toEqual([...DUPLICATE_CAUSES].sort());
    expect(by.redelivery).toBeCloseTo(3, 6);
    expect(by.republish).toBeCloseTo(1, 6);
    expect(by.unknown).toBe(0);
    expect(got[0]!.labels).toMatchObject({ service: "notification", handler: "on-review-created" });
    expect(got[0]!.labels.topic).toBeUndefined();
  });
});

describe("handler time quantiles", () => {
  it("embedded mode: p50/p99 per service and handler over 5 min; the lint's 1 h p99 still remembers a slow half hour ago", async () => {
    const { registry, src, tick } = embeddedSource(7_000_000, { intervalMs: 60_000 });
    const [ok, failed] = dedupMetrics(registry).handlerTime.handler("svc", "h");
    await src.sample();
    for (let minute = 0; minute < 40; minute++) {
      // Minutes 0-9: slow attempts (45 s, some failing); then 100 quick ones (0.2 s) a minute.
      if (minute < 10) for (let i = 0; i < 10; i++) (i % 2 ? ok : failed)(45);
      else for (let i = 0; i < 100; i++) ok(0.2);
      await tick(60_000);
    }
    const one = async (q: "handler_p50" | "handler_p99" | "handler_p99_1h") => {
      const got = await src.instant(q);
      expect(got).toHaveLength(1);
      expect(got[0]!.labels).toEqual({ service: "svc", handler: "h" });
      return got[0]!.value!;
    };
    expect(await one("handler_p50")).toBeGreaterThan(0.1);
    expect(await one("handler_p50")).toBeLessThanOrEqual(0.25);
    expect(await one("handler_p99")).toBeLessThanOrEqual(0.25);
    expect(await one("handler_p99_1h")).toBeGreaterThan(30);
  });
});

describe("lease counters: DedupLeaseLost and the Leases panel", () => {
  it("embedded mode: one lease lost fires DedupLeaseLost at once (page) for that handler only; the panel's three rates per handler", async () => {
    const { rec, src, tick } = embeddedSource(9_000_000);
    rec.register("demo.events", "on-user-banned");
    rec.register("demo.events", "on-page-viewed");
    for (let i = 0; i < 3; i++) await tick(1000);
    const leaseLost = () => ALERT_LIST.find((a) => a.name === "DedupLeaseLost")!;
    const state = async () => (await src.alerts()).find((r) => r.alert === "DedupLeaseLost")!;
    expect((await state()).state).toBe("inactive");
    rec.leaseLost("demo.events", "on-user-banned");
    rec.inProgress("demo.events", "on-user-banned");
    rec.released("demo.events", "on-user-banned");
    rec.released("demo.events", "on-user-banned");
    await tick(1000);
    const s = await state();
    expect(s.state).toBe("firing");
    expect(s.instances.map((i) => i.labels)).toEqual([
      { service: "notification", topic: "demo.events", handler: "on-user-banned" },
    ]);
    expect(leaseLost()).toMatchObject({ severity: "page", for: "0m", query: "lease_lost_rate" });
    const by = async (q: "lease_lost_rate" | "in_progress_rate" | "released_rate") =>
      Object.fromEntries((await src.instant(q)).map((x) => [x.labels.handler, x.value]));
    expect((await by("lease_lost_rate"))["on-page-viewed"]).toBe(0);
    expect((await by("lease_lost_rate"))["on-user-banned"]).toBeGreaterThan(0);
    expect((await by("released_rate"))["on-user-banned"]).toBeCloseTo(
      2 * (await by("in_progress_rate"))["on-user-banned"]!,
      9,
    );
  });

  it("the alert's PromQL is its named query's, per service, topic and handler", () => {
    expect(PROMQL.lease_lost_rate).toBe("sum by (service, topic, handler) (rate(deduplication_lease_lost_total[5m]))");
    expect(ALERT_LIST.find((a) => a.name === "DedupLeaseLost")!.expr).toBe(`${PROMQL.lease_lost_rate} > 0`);
  });
});
