/**
 * What the promtool tests cover: every alert of a list needs a case that expects it firing and one
 * that expects it silent. `infra/prometheus/promtool.test.ts` fails on the names this returns, so an
 * alert added to `lib/thresholds.ts` without promtool cases fails a test instead of shipping untested.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";

interface AlertTest {
  alertname: string;
  exp_alerts: unknown[];
}

/** The promtool `alert_rule_test` cases of these test files. */
export function alertRuleCases(testFiles: readonly string[]): AlertTest[] {
  type Test = { alert_rule_test?: AlertTest[] };
  return testFiles
    .flatMap((f) => (parse(readFileSync(f, "utf8")) as { tests: Test[] }).tests)
    .flatMap((t) => t.alert_rule_test ?? []);
}

/** Each alert name without a firing case or without a silent case, with what it lacks. */
export function uncoveredAlerts(alertNames: readonly string[], testFiles: readonly string[]): string[] {
  const cases = alertRuleCases(testFiles);
  const out: string[] = [];
  for (const name of alertNames) {
    const mine = cases.filter((c) => c.alertname === name);
    if (!mine.some((c) => c.exp_alerts.length > 0)) out.push(`${name}: no case expects it firing`);
    if (!mine.some((c) => c.exp_alerts.length === 0)) out.push(`${name}: no case expects it silent`);
  }
  return out;
}
