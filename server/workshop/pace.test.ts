import { describe, expect, it } from "vitest";
import { NARRATED_GAP_MS, NARRATED_MAX_RUN_MS } from "@/lib/api/workshop";
import { scenarioEnv } from "./env";
import { PublishPacer } from "./pace";
import { expectedOutcomeSuite } from "./scenarios.suite";
import { WorkshopRunner } from "./workshop";

describe("a run's pace", () => {
  it("a narrated run hands out one publish slot every gap; a fast one never waits", () => {
    const narrated = new PublishPacer("narrated", 250);
    expect([narrated.take(1000), narrated.take(1000), narrated.take(1100), narrated.take(2000)]).toEqual([
      0, 250, 400, 0,
    ]);
    const fast = new PublishPacer("fast", 250);
    expect([fast.take(1000), fast.take(1000)]).toEqual([0, 0]);
  });

  it("a narrated retry-on-error run shows its deliveries one by one: the tiles grow while it runs and its timeline spans the pace", async () => {
    const env = scenarioEnv();
    const runner = new WorkshopRunner(() => env);
    try {
      const runId = runner.start("retry-on-error", "narrated");
      await new Promise((r) => setTimeout(r, 2_000));
      const mid = (await runner.view(runId))!;
      expect(mid.status).toBe("running");
      expect(mid.pace).toBe("narrated");
      // 2 s into the run about 8 of its 30 messages are out, and handled as they came.
      expect(mid.summary.published).toBeGreaterThan(0);
      expect(mid.summary.published).toBeLessThan(20);
      expect(mid.summary.sideEffects).toBeGreaterThan(0);
      const v = await runner.wait(runId);
      expect(v.outcome?.met, JSON.stringify(v.summary)).toBe(true);
      const at = v.timeline.map((e) => Date.parse(e.at));
      expect(Math.max(...at) - Math.min(...at)).toBeGreaterThanOrEqual((v.summary.published - 2) * NARRATED_GAP_MS);
    } finally {
      await env.close();
    }
  }, 60_000);

  it("the list gives each scenario's bound at both paces, the narrated one at most 2 minutes", () => {
    const env = scenarioEnv();
    const list = new WorkshopRunner(() => env).list();
    for (const s of list.scenarios) {
      expect(s.narratedMaxDurationMs).toBe(NARRATED_MAX_RUN_MS);
      expect(s.maxDurationMs).toBeLessThanOrEqual(NARRATED_MAX_RUN_MS);
    }
  });
});

/** Every scenario still shows what it declares when its messages go out one by one, each within the narrated bound. */
describe("workshop scenarios at the narrated pace, embedded mode", () => {
  const env = scenarioEnv();
  const runner = new WorkshopRunner(() => env);
  expectedOutcomeSuite(
    runner,
    NARRATED_MAX_RUN_MS + 10_000,
    (name, _runId, v, expect) => {
      expect(v.pace).toBe("narrated");
      const ms = Date.parse(v.finishedAt!) - Date.parse(v.startedAt);
      console.log(`narrated ${name}: ${(ms / 1000).toFixed(1)} s, ${v.summary.published} published`);
      expect(ms).toBeLessThanOrEqual(NARRATED_MAX_RUN_MS);
    },
    { concurrent: true, pace: "narrated" },
  );
});
