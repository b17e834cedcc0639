import { describe, expect, it } from "vitest";
import { SCENARIO_NAMES } from "@/lib/api/workshop";
import { scenarioEnv } from "./env";
import { ScenarioContext } from "./scenario-context";
import { SCENARIOS } from "./scenarios";
import { expectedOutcomeSuite } from "./scenarios.suite";
import { WorkshopRunner } from "./workshop";

/**
 * Embedded mode (in-memory broker, store and side effects): every scenario's summary must meet the
 * expected outcome it declares — the correct setups lose nothing and leak no duplicate push, each
 * anti-pattern shows its failure.
 */
describe("workshop scenarios, embedded mode", () => {
  it("declares all 14 scenarios, in order, each bounded by 2 minutes", () => {
    expect(SCENARIOS.map((s) => s.name)).toEqual([...SCENARIO_NAMES]);
    for (const s of SCENARIOS) {
      expect(s.maxDurationMs).toBeLessThanOrEqual(120_000);
      expect(s.expected.checks.length).toBeGreaterThan(0);
    }
  });

  const env = scenarioEnv();
  const runner = new WorkshopRunner(() => env);
  expectedOutcomeSuite(
    runner,
    60_000,
    (_name, _runId, v, expect) => {
      expect(v.status).toBe("done");
      expect(v.summary.published).toBeGreaterThan(0);
      expect(v.timelineTotal).toBeGreaterThanOrEqual(v.summary.handlerCalls);
    },
    { concurrent: true },
  );
});

describe("a run's report counts what reached the broker", () => {
  it("forwarder-republish: records = what the topic holds (40 events + 10 same-UUID re-sends), published = distinct events", async () => {
    const env = scenarioEnv();
    const def = SCENARIOS.find((s) => s.name === "forwarder-republish")!;
    const ctx = new ScenarioContext(env, def.name, new AbortController().signal);
    try {
      await ctx.setup();
      await def.run(ctx);
      const onTopic = (await env.transport.readAll(ctx.topic)).length;
      const s = ctx.probe.summary();
      expect(onTopic).toBe(50);
      expect(s.records).toBe(onTopic);
      expect(s.published).toBe(40);
      // Every record was delivered once here (no rebalance, no retry): the summary's deliveries.
      expect(s.deliveries).toBe(onTopic);
    } finally {
      await ctx.teardown();
      await env.close();
    }
  }, 60_000);
});
