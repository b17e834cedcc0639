import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Counter, Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { RATE_WINDOW } from "@/lib/alert-exprs";
import { defineAlert } from "@/lib/alert-model";
import { NAMED_QUERIES, type NamedQuery, type QueryName } from "@/lib/named-queries";
import { ALERT_LIST } from "@/lib/thresholds";
import { METRIC_LABELS, METRIC_NAMES } from "@/names/dedup";
import { uncoveredAlerts } from "@/infra/prometheus/promtool-coverage";
import { LocalSource } from "@/server/observe/metrics/local";
import { EVALUATE, evaluateWith, type Evaluator } from "@/server/observe/metrics/local-eval";
import { increaseAt, sumBy } from "@/server/observe/metrics/local-promql";
import { DEFAULT_DASHBOARD_BASE_URL, renderRules } from "./gen-infra";

/**
 * Adding an alert on a new query is one entry in the query list, its evaluator and the alert's
 * entry: a query planted in a copy of `NAMED_QUERIES` (with its evaluator in a copy of `EVALUATE`)
 * and an alert on it planted in a copy of the alert list are written into the rule file, demanded by
 * the promtool coverage check until it has cases, pass promtool with them, and are evaluated by the
 * embedded evaluator, with no other file touched.
 */
const PLANTED = "planted_dlq_writes";
const plantedQuery: NamedQuery = {
  name: PLANTED,
  by: METRIC_LABELS.poisoned,
  promql: `sum by (${METRIC_LABELS.poisoned.join(", ")}) (increase(${METRIC_NAMES.poisoned}[${RATE_WINDOW}]))`,
};
const plantedEvaluator: Evaluator = (snaps, t, by, w) => [
  ...sumBy(increaseAt(snaps, METRIC_NAMES.poisoned, t, w), by).values(),
];
const queries = [...NAMED_QUERIES, plantedQuery];
const planted = defineAlert(
  {
    name: "DedupPlantedDlqWrites",
    title: "Messages sent to the DLQ over 5 min",
    // A name the closed list does not know: the copy above adds it.
    query: PLANTED as QueryName,
    threshold: { value: 0, label: "> 0" },
    normal: null,
    unit: "count",
    by: METRIC_LABELS.poisoned,
    for: "0m",
    severity: "ticket",
    texts: {
      summary: "DLQ writes on {{ $labels.service }}/{{ $labels.handler }}",
      description: "Messages reach the DLQ.",
    },
    dashboardPath: "/handlers/{{ $labels.service }}/{{ $labels.handler }}",
  },
  queries,
);
const alerts = [...ALERT_LIST, planted];
const dir = mkdtempSync(join(tmpdir(), "dedup-add-alert-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function promtool(args: string[]): { status: number; out: string } {
  const r = spawnSync(process.env.PROMTOOL ?? "/usr/bin/promtool", args, {
    encoding: "utf8",
    timeout: 60_000,
    cwd: dir,
  });
  if (r.error) throw r.error;
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

describe("an alert is one entry", () => {
  it("takes its value's PromQL from its named query, which the one list does not have until the entry is planted", () => {
    expect(planted.valueExpr).toBe(plantedQuery.promql);
    expect(planted.expr).toBe(`${plantedQuery.promql} > 0`);
    expect(() => defineAlert({ ...planted, variants: undefined }, NAMED_QUERIES)).toThrow(
      /planted_dlq_writes is not a named query/,
    );
  });

  it("is written into the rule file with its texts and runbook link, and promtool accepts the file", () => {
    const rules = renderRules(alerts);
    writeFileSync(join(dir, "rules.yml"), rules);
    expect(rules).toContain(`alert: ${planted.name}`);
    expect(rules).toContain(`expr: ${plantedQuery.promql} > 0`);
    expect(rules).toContain(`runbook_url: ${DEFAULT_DASHBOARD_BASE_URL}${planted.runbookUrl}`);
    const r = promtool(["check", "rules", "rules.yml"]);
    expect(r.out).toContain(`SUCCESS: ${alerts.length} rules found`);
  });

  it("is reported by the promtool coverage check until it has a firing and a silent case, then passes promtool", () => {
    const series = `${METRIC_NAMES.poisoned}{service="s",topic="t",handler="h",reason_poisoned="marshal"}`;
    const labels = { severity: "ticket", service: "s", topic: "t", handler: "h", reason_poisoned: "marshal" };
    const annotations = {
      summary: "DLQ writes on s/h",
      description: "Messages reach the DLQ.",
      runbook_url: `${DEFAULT_DASHBOARD_BASE_URL}${planted.runbookUrl}`,
      dashboard_url: `${DEFAULT_DASHBOARD_BASE_URL}/handlers/s/h?range=1h`,
      // Per handler, so it carries the handler's context too (lib/alert-context.ts): none here.
      hot_uuids: "none exported (no dedup_hot_uuid_copies series for this handler)",
      dlq_backlog: "not measured (no dedup_dlq_backlog_records series for this handler)",
    };
    const test = {
      rule_files: ["rules.yml"],
      evaluation_interval: "1m",
      tests: [
        {
          interval: "1m",
          input_series: [{ series, values: "0 0 0 1 1 1 1 1 1 1 1 1" }],
          alert_rule_test: [
            { eval_time: "2m", alertname: planted.name, exp_alerts: [] },
            {
              eval_time: "4m",
              alertname: planted.name,
              exp_alerts: [{ exp_labels: labels, exp_annotations: annotations }],
            },
          ],
        },
      ],
    };
    const none = join(dir, "none.test.yml");
    writeFileSync(
      none,
      stringify({ rule_files: ["rules.yml"], tests: [{ interval: "1m", input_series: [], alert_rule_test: [] }] }),
    );
    expect(uncoveredAlerts([planted.name], [none])).toEqual([
      `${planted.name}: no case expects it firing`,
      `${planted.name}: no case expects it silent`,
    ]);
    const file = join(dir, "planted.test.yml");
    writeFileSync(file, stringify(test));
    expect(uncoveredAlerts([planted.name], [file])).toEqual([]);
    const r = promtool(["test", "rules", "planted.test.yml"]);
    expect(r.status, r.out).toBe(0);
  });

  it("is evaluated by the embedded evaluator with the planted query's evaluator and shown with its own texts", async () => {
    const registry = new Registry();
    const poisoned = new Counter({
      name: METRIC_NAMES.poisoned,
      help: "h",
      labelNames: [...METRIC_LABELS.poisoned],
      registers: [registry],
    });
    let now = 1_000_000;
    const evaluate = evaluateWith(queries, { ...EVALUATE, [PLANTED]: plantedEvaluator });
    const src = new LocalSource(registry, { intervalMs: 1000, alerts, evaluate }, () => now);
    poisoned.inc({ service: "s", topic: "t", handler: "h", reason_poisoned: "marshal" }, 0);
    await src.sample();
    now += 1000;
    poisoned.inc({ service: "s", topic: "t", handler: "h", reason_poisoned: "marshal" }, 3);
    await src.sample();
    const [sample] = await src.instant(PLANTED as QueryName);
    expect(sample?.labels).toEqual({ service: "s", topic: "t", handler: "h", reason_poisoned: "marshal" });
    expect(sample?.value).toBeGreaterThan(0);
    const rule = (await src.alerts()).find((a) => a.alert === planted.name);
    expect(rule?.state).toBe("firing");
    expect(rule?.instances[0]?.summary).toBe("DLQ writes on s/h");
    expect(rule?.runbookUrl).toBe(planted.runbookUrl);
  });

  it("the one list's evaluator refuses the planted query: without its evaluator, nothing computes it", async () => {
    const src = new LocalSource(new Registry(), { intervalMs: 1000, alerts }, () => 1_000_000);
    await expect(src.sample()).rejects.toThrow(/planted_dlq_writes: no named query or no evaluator/);
  });
});
