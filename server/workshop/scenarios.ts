/**
 * The workshop scenarios (spec §1, §4, §9, §10): each a script over a `ScenarioContext`
 * with its expected outcome declared as data — the API shows it, the run is checked against it,
 * and the tests assert it in both modes. The scenarios are written by group: the duplicate
 * sources (./scenarios-duplicate-sources.ts), the Redis outage (./scenarios-redis-outage.ts) and
 * the anti-patterns (./scenarios-anti-patterns.ts), with the helpers of ./scenario-kit.ts.
 */
import type { CheckResult, ExpectedOutcome, RunSummary } from "@/lib/api/workshop";
import type { ScenarioDefinition } from "./scenario-kit";
import { ANTI_PATTERN_SCENARIOS } from "./scenarios-anti-patterns";
import { DUPLICATE_SOURCE_SCENARIOS } from "./scenarios-duplicate-sources";
import { REDIS_OUTAGE_SCENARIOS } from "./scenarios-redis-outage";

/** Every scenario, in presentation order. */
export const SCENARIOS: readonly ScenarioDefinition[] = [
  ...DUPLICATE_SOURCE_SCENARIOS,
  ...REDIS_OUTAGE_SCENARIOS,
  ...ANTI_PATTERN_SCENARIOS,
];

/** Looks a scenario up by name. */
export function scenarioByName(name: string): ScenarioDefinition | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

/** Checks a summary against expected checks. */
export function checkOutcome(expected: ExpectedOutcome, s: RunSummary): { met: boolean; checks: CheckResult[] } {
  const checks = expected.checks.map((c) => {
    const actual = s[c.field];
    const ok =
      c.op === "eq"
        ? actual === c.value
        : c.op === "gt"
          ? actual > c.value
          : c.op === "gte"
            ? actual >= c.value
            : actual <= c.value;
    return { ...c, actual, ok };
  });
  return { met: checks.every((c) => c.ok), checks };
}
