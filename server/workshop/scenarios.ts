/**
 * The workshop scenarios (spec §1, §4, §9, §10): each a script over a `ScenarioContext`
 * with its expected outcome declared as data — the API shows it, the run is checked against it,
 * and the tests assert it in both modes. The scenarios are written by group: the duplicate
 * sources (./scenarios-duplicate-sources.ts), the Redis outage (./scenarios-redis-outage.ts) and
 * the anti-patterns (./scenarios-anti-patterns.ts), with the helpers of ./scenario-kit.ts.
 */
import type { CheckResult, ExpectedCheck, ExpectedOutcome, GuaranteeRun, RunSummary } from "@/lib/api/workshop";
import type { ScenarioDefinition } from "./scenario-kit";
import { ANTI_PATTERN_SCENARIOS } from "./scenarios-anti-patterns";
import { DUPLICATE_SOURCE_SCENARIOS } from "./scenarios-duplicate-sources";
import { GUARANTEE_SCENARIOS } from "./scenarios-guarantees";
import { REDIS_OUTAGE_SCENARIOS } from "./scenarios-redis-outage";

/** Every scenario, in presentation order. */
export const SCENARIOS: readonly ScenarioDefinition[] = [
  ...DUPLICATE_SOURCE_SCENARIOS,
  ...REDIS_OUTAGE_SCENARIOS,
  ...ANTI_PATTERN_SCENARIOS,
  ...GUARANTEE_SCENARIOS,
];

/** Looks a scenario up by name. */
export function scenarioByName(name: string): ScenarioDefinition | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

/**
 * Checks a run against expected checks: the run's summary, or for a check naming a guarantee that
 * guarantee's summary. A guarantee that was not run leaves its checks unevaluated (`actual` and
 * `ok` null, `notMeasured` why); one that failed fails them. `met` needs at least one evaluated
 * check and every evaluated one to hold.
 */
export function checkOutcome(
  expected: ExpectedOutcome,
  s: RunSummary,
  guarantees: readonly GuaranteeRun[] | null = null,
): { met: boolean; checks: CheckResult[] } {
  const checks = expected.checks.map((c): CheckResult => {
    if (!c.guarantee) return { ...c, actual: s[c.field], ok: holds(c, s[c.field]) };
    const g = guarantees?.find((x) => x.guarantee === c.guarantee);
    if (g?.status === "measured") return { ...c, actual: g.summary[c.field], ok: holds(c, g.summary[c.field]) };
    // Not run here: unknown, not evaluated. Failed or still running when the run ended: the run did not show it.
    if (!g || g.status === "not-run")
      return { ...c, actual: null, ok: null, notMeasured: g ? `not run: ${g.reason}` : "not part of this run" };
    return {
      ...c,
      actual: null,
      ok: false,
      notMeasured: g.status === "failed" ? `failed: ${g.reason}` : "still running",
    };
  });
  const evaluated = checks.filter((c) => c.ok !== null);
  return { met: evaluated.length > 0 && evaluated.every((c) => c.ok), checks };
}

function holds(c: ExpectedCheck, actual: number): boolean {
  return c.op === "eq"
    ? actual === c.value
    : c.op === "gt"
      ? actual > c.value
      : c.op === "gte"
        ? actual >= c.value
        : actual <= c.value;
}
