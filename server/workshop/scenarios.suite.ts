/**
 * The check both scenario test files run (embedded: scenarios.test.ts, real mode:
 * scenarios.integration.test.ts): each of the 14 scenarios, run by `runner`, ends without an error
 * and meets every check of the outcome it declares — every check it could evaluate: a guarantee the
 * mode cannot run leaves its checks unevaluated, which the scenario's own tests pin; `more` adds the
 * mode's own assertions.
 */
import { it, type ExpectStatic } from "vitest";
import { SCENARIO_NAMES, type RunPace, type ScenarioName } from "@/lib/api/workshop";
import type { WorkshopRunner } from "./workshop";

/** What {@link WorkshopRunner.wait} answers for a finished run. */
export type FinishedRun = Awaited<ReturnType<WorkshopRunner["wait"]>>;

/**
 * One test per scenario: the declared expected outcome is met, then `more(name, runId, view, expect)`.
 * `concurrent`: the scenarios run at once (each has its own topic, group, key prefix and schema, and
 * a run mostly waits for Kafka and its own timers), up to the project's `maxConcurrency`. `pace`: the
 * runs' pace (fast by default).
 */
export function expectedOutcomeSuite(
  runner: WorkshopRunner,
  timeoutMs: number,
  more: (name: ScenarioName, runId: string, v: FinishedRun, expect: ExpectStatic) => unknown,
  opts: { concurrent?: boolean; pace?: RunPace } = {},
): void {
  const test = opts.concurrent ? it.concurrent : it;
  for (const name of SCENARIO_NAMES) {
    // The test's own `expect`: assertions of concurrent tests must be counted against their test.
    test(
      `${name}: summary meets the declared expected outcome${opts.pace === "narrated" ? " at the narrated pace" : ""}`,
      async ({ expect }) => {
        const runId = runner.start(name, opts.pace);
        const v = await runner.wait(runId);
        expect(v.error).toBeNull();
        // A run over several guarantees says which one missed: the run's total alone hides it.
        const detail = JSON.stringify(v.guarantees ? { summary: v.summary, guarantees: v.guarantees } : v.summary);
        const failed = v.outcome!.checks.filter((c) => c.ok === false);
        expect(failed, detail).toEqual([]);
        expect(v.outcome!.met, detail).toBe(true);
        await more(name, runId, v, expect);
      },
      timeoutMs,
    );
  }
}
