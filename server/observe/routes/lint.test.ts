import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { lintResponseSchema } from "@/lib/api/lint";
import { dedupMetrics, RECOMMENDED_SETUP } from "@/server/dedup";
import { createObserveContext } from "../context";
import { clearDeclaredHandlers, registerHandlers } from "../core/handler-registry";
import { getLint } from "./lint";
import { LocalSource } from "../metrics/local";
import { PROMQL } from "@/lib/named-queries";

afterEach(() => clearDeclaredHandlers());

/** An embedded source whose registry saw `perMinute` attempts of each handler per minute for an hour, each lasting its seconds. */
async function sourceWith(attempts: Record<string, number>) {
  const registry = new Registry();
  const observers = Object.fromEntries(
    Object.keys(attempts).map((h) => [h, dedupMetrics(registry).handlerTime.handler("svc", h)[0]]),
  );
  let now = 10_000_000;
  const src = new LocalSource(registry, { intervalMs: 60_000 }, () => now);
  await src.sample();
  for (let minute = 0; minute < 60; minute++) {
    for (const [h, seconds] of Object.entries(attempts)) for (let i = 0; i < 10; i++) observers[h]!(seconds);
    now += 60_000;
    await src.sample();
  }
  return src;
}

describe("GET /api/lint: handler time against the lease", () => {
  it("warns for the handler whose p99 over the last hour passes half its lease, with the p99 and the lease it compared", async () => {
    const src = await sourceWith({ slow: 40, quick: 0.2 });
    registerHandlers([
      { service: "svc", setup: { ...RECOMMENDED_SETUP, handler: "slow" } },
      { service: "svc", setup: { ...RECOMMENDED_SETUP, handler: "quick" } },
    ]);
    const l = lintResponseSchema.parse(await getLint(createObserveContext({ metrics: src, redis: null })));
    if (l.declared.status !== "ok") throw new Error("declared lint unavailable");
    const by = Object.fromEntries(l.declared.handlers.map((h) => [h.handler, h]));
    expect(by.slow!.findings.map((f) => f.rule)).toEqual(["handler-p99-near-lease"]);
    expect(by.slow!.findings[0]!.message).toContain("a lease takeover is near");
    expect(by.slow!.handlerP99Seconds).toBeGreaterThan(30);
    expect(by.slow!.handlerP99Seconds).toBeLessThanOrEqual(60); // 40 s falls in the (30, 60] bucket
    expect(by.slow!.leaseMs).toBe(60_000);
    expect(by.quick!.findings).toEqual([]);
    expect(by.quick!.handlerP99Seconds).toBeLessThanOrEqual(0.25);
  });

  it("stays silent when the metrics cannot tell (no sample yet)", async () => {
    registerHandlers([{ service: "svc", setup: { ...RECOMMENDED_SETUP, handler: "slow" } }]);
    const src = new LocalSource(new Registry(), { intervalMs: 1000 });
    const l = await getLint(createObserveContext({ metrics: src, redis: null }));
    expect(l.declared.status === "ok" && l.declared.handlers[0]).toMatchObject({
      handlerP99Seconds: null,
      findings: [],
    });
  });

  it("asks Prometheus the same question: the 1 h p99 of one attempt per service and handler, both success values", () => {
    expect(PROMQL.handler_p99_1h).toBe(
      "histogram_quantile(0.99, sum by (le, service, handler) (rate(handler_execution_time_seconds_bucket[1h])))",
    );
    expect(PROMQL.handler_p99).toBe(
      "histogram_quantile(0.99, sum by (le, service, handler) (rate(handler_execution_time_seconds_bucket[5m])))",
    );
  });
});
