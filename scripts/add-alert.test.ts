import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Counter, Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ALERT_LIST } from "@/lib/thresholds";
import { METRIC_NAMES } from "@/names/dedup";
import { uncoveredAlerts } from "@/infra/prometheus/promtool-coverage";
import { LocalSource } from "@/server/observe/metrics/local";
import { plantedDlqAlert } from "@/server/testing/planted-alert";
import { DEFAULT_DASHBOARD_BASE_URL, renderRules } from "./gen-infra";

/**
 * Adding an alert is one entry: a fourth alert planted in a copy of the list is written into the
 * rule file, demanded by the promtool coverage check until it has cases, passes promtool with them,
 * and is evaluated by the embedded evaluator, with no other file touched.
 */
const planted = plantedDlqAlert(
  { value: 0, label: "> 0/s" },
  "DLQ writes on {{ $labels.service }}/{{ $labels.handler }}",
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
  it("is written into the rule file with its texts and runbook link, and promtool accepts the file", () => {
    const rules = renderRules(alerts);
    writeFileSync(join(dir, "rules.yml"), rules);
    expect(rules).toContain(`alert: ${planted.name}`);
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

  it("is evaluated by the embedded evaluator and shown with its own texts", async () => {
    const registry = new Registry();
    const poisoned = new Counter({
      name: METRIC_NAMES.poisoned,
      help: "h",
      labelNames: ["service", "topic", "handler", "reason_poisoned"],
      registers: [registry],
    });
    let now = 1_000_000;
    const src = new LocalSource(registry, { intervalMs: 1000, alerts }, () => now);
    poisoned.inc({ service: "s", topic: "t", handler: "h", reason_poisoned: "marshal" }, 0);
    await src.sample();
    now += 1000;
    poisoned.inc({ service: "s", topic: "t", handler: "h", reason_poisoned: "marshal" }, 3);
    await src.sample();
    const rule = (await src.alerts()).find((a) => a.alert === planted.name);
    expect(rule?.state).toBe("firing");
    expect(rule?.instances[0]?.summary).toBe("DLQ writes on s/h");
    expect(rule?.runbookUrl).toBe(planted.runbookUrl);
  });
});
