import { describe, expect, it } from "vitest";
import { SCENARIO_NAMES } from "@/lib/workshop-types";
import { scenarioEnv } from "./env";
import { SCENARIOS } from "./scenarios";
import { WorkshopRunner } from "./workshop";

/**
 * Embedded mode (in-memory broker, store and side effects): every scenario's summary must meet the
 * expected outcome it declares — the correct setups lose nothing and leak no duplicate push, each
 * anti-pattern shows its failure.
 */
describe("workshop scenarios, embedded mode", () => {
  it("declares all 13 scenarios of the issue, in order, each bounded by 2 minutes", () => {
    expect(SCENARIOS.map((s) => s.name)).toEqual([...SCENARIO_NAMES]);
    for (const s of SCENARIOS) {
      expect(s.maxDurationMs).toBeLessThanOrEqual(120_000);
      expect(s.expected.checks.length).toBeGreaterThan(0);
    }
  });

  const env = scenarioEnv();
  const runner = new WorkshopRunner(() => env);
  for (const name of SCENARIO_NAMES) {
    it(`${name}: summary meets the declared expected outcome`, async () => {
      const runId = runner.start(name);
      const v = await runner.wait(runId);
      expect(v.error).toBeNull();
      expect(v.status).toBe("done");
      const failed = v.outcome!.checks.filter((c) => !c.ok);
      expect(failed, JSON.stringify(v.summary)).toEqual([]);
      expect(v.summary.published).toBeGreaterThan(0);
      expect(v.timelineTotal).toBeGreaterThanOrEqual(v.summary.handlerCalls);
    }, 60_000);
  }
});
