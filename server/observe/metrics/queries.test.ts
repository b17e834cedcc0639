import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { dedupRecorder } from "@/server/dedup";
import { DUPLICATE_CAUSES, METRIC_NAMES } from "@/names/dedup";
import { ALERT_LIST } from "@/lib/thresholds";
import { LocalSource } from "./local";
import { DUPLICATES_BY_CAUSE_METRIC, PROMQL } from "./queries";

describe("alert queries", () => {
  it("each alert's value is the PromQL of its named query, so the embedded evaluator and Prometheus compute the same thing", () => {
    for (const a of ALERT_LIST) expect(PROMQL[a.query], a.name).toBe(a.valueExpr);
  });
});

describe("duplicates by cause", () => {
  it("the dashboard's metric name is the library's", () => {
    expect(DUPLICATES_BY_CAUSE_METRIC).toBe(METRIC_NAMES.duplicatesByCause);
    expect(PROMQL.duplicates_by_cause).toBe(`sum by (service, handler, cause) (rate(${METRIC_NAMES.duplicatesByCause}[5m]))`);
  });

  it("embedded mode answers the named query per cause from the sampled registry", async () => {
    const registry = new Registry();
    const rec = dedupRecorder(registry, "notification");
    let now = 5_000_000;
    const src = new LocalSource(registry, { intervalMs: 1000 }, () => now);
    rec.register("demo.events", "on-review-created");
    await src.sample();
    for (let tick = 0; tick < 10; tick++) {
      // Per second: 3 redeliveries, 1 republish.
      for (let i = 0; i < 4; i++) {
        rec.result("demo.events", "on-review-created", "deduplicated");
        rec.duplicate("demo.events", "on-review-created", i < 3 ? "redelivery" : "republish");
      }
      now += 1000;
      await src.sample();
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
