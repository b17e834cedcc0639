import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseMarkdown } from "@/lib/markdown";
import { DASHBOARD_SCRAPE_JOB } from "@/lib/alert-exprs";
import { ALERT_LIST } from "@/lib/thresholds";
import { execFileSync } from "node:child_process";
import {
  DEFAULT_DASHBOARD_BASE_URL,
  GENERATED_FILES,
  renderAll,
  renderRules,
  REPO_ROOT,
  runbookBase,
  staleFiles,
  writePrometheusConfig,
} from "./gen-infra";

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const rules = (parse(renderRules()) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

/** The anchors of RUNBOOK.md's headings, as the app's `/runbook` page and GitHub give them. */
function runbookAnchors(runbook: string): Set<string> {
  return new Set(parseMarkdown(runbook).flatMap((b) => (b.t === "heading" ? [b.id] : [])));
}

describe("gen:infra", () => {
  it("every rule carries a dashboard_url: the handler page (per-handler alerts), the topic's DLQ page (DLQ alerts) or the service's overview, the last hour, from one base URL", () => {
    for (const r of rules) {
      const url = r.annotations.dashboard_url ?? "";
      const by = ALERT_LIST.find((a) => a.name === r.alert)?.by ?? [];
      expect(url.startsWith(`${DEFAULT_DASHBOARD_BASE_URL}/`), r.alert).toBe(true);
      expect(url, r.alert).toMatch(/[?&]range=1h$/);
      if (by.includes("handler"))
        expect(url, r.alert).toContain("/handlers/{{ $labels.service }}/{{ $labels.handler }}?");
      else if (r.expr.includes("dlq") && by.includes("topic"))
        expect(url, r.alert).toContain("/dlq?topic={{ $labels.topic }}.dlq&");
      else if (by.includes("service")) expect(url, r.alert).toContain("service={{ $labels.service }}");
      // Per scrape job (the dashboard watched): its overview.
      else expect(url, r.alert).toBe(`${DEFAULT_DASHBOARD_BASE_URL}/?range=1h`);
    }
    const deployed = (
      parse(renderRules(ALERT_LIST, "https://dedup.example.com/ops/")) as { groups: { rules: Rule[] }[] }
    ).groups[0]!.rules;
    expect(deployed.map((r) => r.annotations.dashboard_url)).toEqual(
      rules.map((r) =>
        r.annotations.dashboard_url!.replace(DEFAULT_DASHBOARD_BASE_URL, "https://dedup.example.com/ops"),
      ),
    );
    expect(() => renderRules(ALERT_LIST, "dedup.example.com")).toThrow();
  });

  it("the committed rule file and dashboard equal what `npm run gen:infra` generates", () => {
    expect(staleFiles(), "run `npm run gen:infra` and commit the result").toEqual([]);
  });

  it("reports a file as stale when it differs or is missing", () => {
    const dir = mkdtempSync(join(tmpdir(), "gen-infra-"));
    try {
      for (const [path, content] of Object.entries(renderAll())) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
      expect(staleFiles(dir)).toEqual([]);
      const rulesPath = join(dir, GENERATED_FILES.rules);
      writeFileSync(rulesPath, readFileSync(rulesPath, "utf8").replace("> 0.1", "> 0.2"));
      rmSync(join(dir, GENERATED_FILES.dashboard));
      expect(staleFiles(dir).sort()).toEqual([GENERATED_FILES.dashboard, GENERATED_FILES.rules].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes every alert of lib/thresholds with its expr, for and severity", () => {
    expect(rules.map((r) => r.alert)).toEqual([
      "DedupDuplicateRateHigh",
      "DedupRedisErrors",
      "DedupRedisLatencyHigh",
      "DedupLeaseLost",
      "DedupPayloadConflict",
      "DedupConsumerLagGrowing",
      "DedupMemoryLost",
      "DedupDlqBacklogStale",
      "DedupConsumerSilent",
      "DedupDashboardDown",
      "DedupFleetGaugesMissing",
    ]);
    for (const a of ALERT_LIST) {
      const r = rules.find((x) => x.alert === a.name);
      expect(r).toMatchObject({ expr: a.expr, for: a.for, labels: { severity: a.severity } });
    }
    expect(rules.find((r) => r.alert === "DedupLeaseLost")?.labels.severity).toBe("page");
    expect(rules.find((r) => r.alert === "DedupRedisLatencyHigh")?.expr).toBe(
      "histogram_quantile(0.99, sum by (le, service) (rate(deduplication_check_duration_seconds_bucket[5m]))) > 0.05",
    );
    expect(rules.find((r) => r.alert === "DedupPayloadConflict")?.expr).toBe(
      "sum by (service, handler) (increase(deduplication_payload_conflicts_total[5m])) > 0",
    );
  });

  it("annotates each alert with summary, a humanized description and a runbook_url", () => {
    for (const r of rules) {
      // A per-handler alert carries the handler's context too (lib/alert-context.ts; promtool: context.test.yml).
      const by = ALERT_LIST.find((a) => a.name === r.alert)?.by ?? [];
      const context = by.includes("service") && by.includes("handler") ? ["dlq_backlog", "hot_uuids"] : [];
      expect(Object.keys(r.annotations).sort(), r.alert).toEqual(
        ["dashboard_url", "description", ...context, "runbook_url", "summary"].sort(),
      );
      expect(r.annotations.description).toMatch(
        /\{\{ \$value \| (humanizePercentage|humanizeDuration|printf "%\.3g") \}\}/,
      );
      expect(r.annotations.runbook_url).toBe(`${DEFAULT_DASHBOARD_BASE_URL}/runbook#${r.alert.toLowerCase()}`);
    }
  });

  it("points runbook_url at the app's own /runbook under DASHBOARD_BASE_URL, or at RUNBOOK_BASE_URL when set", () => {
    const urls = (base: string, runbook?: string) =>
      (
        parse(renderRules(ALERT_LIST, base, runbookBase(base, runbook))) as { groups: { rules: Rule[] }[] }
      ).groups[0]!.rules.map((r) => r.annotations.runbook_url);
    expect(urls("https://dedup.example.com/ops/")).toEqual(
      ALERT_LIST.map((a) => `https://dedup.example.com/ops/runbook#${a.runbookAnchor}`),
    );
    expect(urls("https://dedup.example.com", "https://wiki.example.com/dedup/RUNBOOK.md")).toEqual(
      ALERT_LIST.map((a) => `https://wiki.example.com/dedup/RUNBOOK.md#${a.runbookAnchor}`),
    );
    expect(urls("https://dedup.example.com", "/docs/runbook")).toEqual(
      ALERT_LIST.map((a) => `https://dedup.example.com/docs/runbook#${a.runbookAnchor}`),
    );
  });

  it("stack:up with DASHBOARD_BASE_URL runs Prometheus on rules whose links are the deployment's, not a responder's own 127.0.0.1:3000; promtool accepts the config", () => {
    const dir = mkdtempSync(join(tmpdir(), "prom-config-"));
    try {
      const config = writePrometheusConfig(dir, "https://dedup.example.com/ops");
      const written = parse(readFileSync(join(dir, "rules", "dedup.yml"), "utf8")) as { groups: { rules: Rule[] }[] };
      const links = written.groups
        .flatMap((g) => g.rules)
        .flatMap((r) => [r.annotations.dashboard_url!, r.annotations.runbook_url!]);
      expect(links.length).toBeGreaterThan(0);
      for (const l of links) expect(l, l).toMatch(/^https:\/\/dedup\.example\.com\/ops\//);
      expect(readFileSync(config, "utf8")).toContain("rules/dedup.yml");
      execFileSync("promtool", ["check", "config", config], { stdio: "pipe" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps one DedupRedisErrors rule grouped by reason, its text chosen per reason (marshal is not a Redis incident)", () => {
    const r = rules.filter((x) => x.alert === "DedupRedisErrors");
    expect(r).toHaveLength(1);
    expect(r[0]?.expr).toBe("sum by (service, reason) (rate(deduplication_errors_total[5m])) > 0");
    for (const text of [r[0]?.annotations.summary ?? "", r[0]?.annotations.description ?? ""]) {
      const m = /^\{\{ if eq \$labels\.reason "marshal" \}\}(.+)\{\{ else \}\}(.+)\{\{ end \}\}$/s.exec(text);
      expect(m, text).not.toBeNull();
      const [, marshal = "", redis = ""] = m ?? [];
      expect(marshal).not.toMatch(/unchecked|fail-open|Redis [a-z_]+ over|against Redis/i);
      expect(redis).not.toMatch(/publisher|UUID/);
    }
    expect(r[0]?.annotations.description).toMatch(
      /publisher.+dead-letter.+\{\{ else \}\}.+Redis or the consumer.+Fail-open.+fail-closed/s,
    );
  });

  it("points every runbook_url (and every in-page link of the runbook) at an existing RUNBOOK.md heading", () => {
    const runbook = readFileSync(join(REPO_ROOT, "RUNBOOK.md"), "utf8");
    const anchors = runbookAnchors(runbook);
    for (const r of rules) {
      const anchor = r.annotations.runbook_url?.split("#")[1] ?? "";
      expect(anchors, `RUNBOOK.md has no heading for #${anchor}`).toContain(anchor);
    }
    for (const m of runbook.matchAll(/\]\(#([^)]+)\)/g)) expect(anchors).toContain(m[1]);
  });

  it("lists every rule in the runbook's alert table with its severity, and names in its introduction exactly the alerts that page", () => {
    const runbook = readFileSync(join(REPO_ROOT, "RUNBOOK.md"), "utf8");
    const rows = new Map(
      [...runbook.matchAll(/^\| \[(Dedup\w+)\]\(#\w+\) \|.*\| (page|ticket) \|$/gm)].map((m) => [m[1], m[2]]),
    );
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(rules.map((r) => [r.alert, r.labels.severity])));
    const intro = runbook.slice(0, runbook.indexOf("| alert |"));
    const paging = rules.filter((r) => r.labels.severity === "page").map((r) => r.alert);
    const count = ["No", "One", "Two", "Three", "Four", "Five", "Six"][paging.length];
    expect(intro).toContain(`${count} alerts are \`severity: page\``);
    for (const name of paging) expect(intro, name).toContain(`\`${name}\``);
  });

  it("names in the dashboard-down rule the job under which the shipped Prometheus scrapes the app", () => {
    const prom = parse(readFileSync(join(REPO_ROOT, "infra/prometheus/prometheus.yml"), "utf8")) as {
      scrape_configs: { job_name: string; metrics_path?: string }[];
    };
    const job = prom.scrape_configs.find((c) => c.job_name === DASHBOARD_SCRAPE_JOB);
    expect(job?.metrics_path).toBe("/api/metrics");
    expect(rules.find((r) => r.alert === "DedupDashboardDown")?.expr).toContain(`up{job="${DASHBOARD_SCRAPE_JOB}"}`);
  });

  it("gives each alert a runbook section that says what to look at and what to do", () => {
    const runbook = readFileSync(join(REPO_ROOT, "RUNBOOK.md"), "utf8");
    for (const a of ALERT_LIST) {
      const start = runbook.indexOf(`\n## ${a.name}\n`);
      expect(start, `no section for ${a.name}`).toBeGreaterThan(-1);
      const next = runbook.indexOf("\n## ", start + 1);
      const section = runbook.slice(start, next === -1 ? undefined : next);
      for (const part of ["What it means", "Look first", "What to do", "When it is noise"]) {
        expect(section, `${a.name}: ${part}`).toContain(`**${part}.**`);
      }
    }
  });
});
