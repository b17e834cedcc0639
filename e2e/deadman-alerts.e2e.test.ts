/**
 * The alerts that watch the watchers, fired by a real Prometheus (Debian's 2.42) loading the
 * project's generated rule file: two consumer services that are not ours (note exporters: only the
 * design note's four metrics) scraped at /metrics, and the built app (`next start`, `DEMO=off`)
 * scraped as job `dedup-health` at /api/metrics, as infra/prometheus/prometheus.yml does. Closing one
 * exporter fires `DedupConsumerSilent` for its service (never for the other); stopping the app by
 * pid fires `DedupDashboardDown`; neither fires before its stop, nor before its threshold or `for`.
 *
 * In CI the real windows (300 s of silence; 2 min down) are too slow, so the same generated rules
 * run with the deadman rules' time constants divided by 20 (server/testing/scaled-rules.ts: 300 s →
 * 15 s, `for: 2m` → 6s, the "last seen" step 60s → 3s; every other character kept, checked below,
 * and promtool checks the copy), scraped and evaluated every second. Each alert must fire within
 * its scaled threshold or `for` + 3 scrape intervals of the stop (the consumer's + one step: "last
 * seen" is known at the step's resolution, `DEADMAN_STEP`, and the rule counts the silence from the
 * step after it), and never before its scaled threshold or `for`.
 *
 * The full-length run (the generated file unchanged, the project's 5 s scrape; about 8 min):
 *   DEADMAN_REALTIME=full flock /tmp/next.lock npx vitest run --project e2e e2e/deadman-alerts.e2e.test.ts
 * It prints the seconds from each stop to its alert firing.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_SCRAPE_JOB, DEADMAN_STEP, DEADMAN_STEP_SECONDS } from "@/lib/alert-exprs";
import { DEADMAN_ALERTS } from "@/lib/deadman-alerts";
import { freePort } from "@/server/testing/net";
import { startNoteExporter, type NoteExporter } from "@/server/testing/note-exporter";
import {
  promAlerts,
  promQuery,
  startOwnPrometheus,
  type OwnPrometheus,
  type PromAlert,
} from "@/server/testing/own-prometheus";
import { durationSeconds, scaleDeadmanRules, type ScaledRules } from "@/server/testing/scaled-rules";
import { ROOT, startApp, until, type App } from "./harness";

const FULL = process.env.DEADMAN_REALTIME === "full";
/** What the CI run divides the deadman rules' time constants by. */
const FACTOR = FULL ? 1 : 20;
const RULES = join(ROOT, "infra/prometheus/rules/dedup.yml");
/** Scrape and evaluation interval (s): the project's own Prometheus config in the full run, 1 s in CI. */
const IV = FULL
  ? durationSeconds(
      /scrape_interval: (\S+)/.exec(readFileSync(join(ROOT, "infra/prometheus/prometheus.yml"), "utf8"))![1]!,
    )
  : 1;
const SILENT = DEADMAN_ALERTS.consumerSilent;
const DOWN = DEADMAN_ALERTS.dashboardDown;
const STEP_S = durationSeconds(DEADMAN_STEP) / FACTOR;
const SILENT_S = SILENT.threshold.value / FACTOR;
const SILENT_FOR_S = SILENT.forMs / 1000 / FACTOR;
const DOWN_FOR_S = DOWN.forMs / 1000 / FACTOR;
/** How late past its threshold or `for` an alert may fire: a scrape to fail, an evaluation, and one to spare. */
const SLACK_S = 3 * IV;

/** One look at Prometheus' alerts: when (ms), and the deadman alerts it held. */
interface Look {
  at: number;
  alerts: PromAlert[];
}

let dir: string;
let scaled: ScaledRules;
let gone: NoteExporter;
let alive: NoteExporter;
let app: App;
let prom: OwnPrometheus;
const looks: Look[] = [];
let watching = true;
let watcher: Promise<void> = Promise.resolve();

const isAlert = (a: PromAlert, name: string, service?: string) =>
  a.labels.alertname === name && (service === undefined || a.labels.service === service);
/** The first look from `from` on where `name` (of `service`) fires. */
const firstFiring = (name: string, from: number, service?: string) =>
  looks.find((l) => l.at >= from && l.alerts.some((a) => a.state === "firing" && isAlert(a, name, service)));
/** Every look before `to` where `name` (of `service`) fired. */
const firedBefore = (name: string, to: number, service?: string) =>
  looks.filter((l) => l.at < to && l.alerts.some((a) => a.state === "firing" && isAlert(a, name, service)));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "deadman-e2e-"));
  scaled = scaleDeadmanRules(readFileSync(RULES, "utf8"), FACTOR);
  writeFileSync(join(dir, "dedup.yml"), scaled.text);
  const tag = Math.random().toString(36).slice(2, 8);
  gone = await startNoteExporter({ service: `deadman-gone-${tag}`, handler: "on-a", topic: `deadman-${tag}` });
  alive = await startNoteExporter({ service: `deadman-alive-${tag}`, handler: "on-a", topic: `deadman-${tag}` });
  // The app first, on the port Prometheus will scrape: a dashboard still starting is a dashboard down.
  const promPort = await freePort();
  app = await startApp({ env: { DEMO: "off", PROMETHEUS_URL: `http://127.0.0.1:${promPort}` } });
  prom = await startOwnPrometheus({
    port: promPort,
    targets: [gone.target, alive.target],
    ruleFiles: [join(dir, "dedup.yml")],
    intervalSec: IV,
    more: [{ job: DASHBOARD_SCRAPE_JOB, targets: [new URL(app.url).host], metricsPath: "/api/metrics" }],
  });
  watcher = (async () => {
    while (watching) {
      const at = Date.now();
      const alerts = await promAlerts(prom.url).catch(() => null);
      if (alerts) looks.push({ at, alerts: alerts.filter((a) => a.labels.alertname?.startsWith("Dedup")) });
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  // Both services and the dashboard scraped, and seen at a step of the deadman subquery.
  await until("Prometheus scraping both exporters and the dashboard", 60_000, async () => {
    const seen = await promQuery(prom.url, "group by (service) (deduplication_check_duration_seconds_count)");
    const up = await promQuery(prom.url, `up{job="${DASHBOARD_SCRAPE_JOB}"} == 1`);
    return seen.length === 2 && up.length === 1;
  });
  await new Promise((r) => setTimeout(r, (STEP_S + IV) * 1000));
}, 180_000);

afterAll(async () => {
  watching = false;
  await watcher;
  await app?.stop();
  await prom?.stop();
  await gone?.stop();
  await alive?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("deadman alerts on a real Prometheus with the project's generated rules", () => {
  it("the rules it loads differ from the generated file only in the deadman rules' time constants, and promtool checks them", async () => {
    const original = readFileSync(RULES, "utf8").split("\n");
    // The file Prometheus was given, read back.
    const copy = readFileSync(join(dir, "dedup.yml"), "utf8").split("\n");
    expect(copy).toHaveLength(original.length);
    // Every line that differs, cut into numbers-with-units and the text between: the text is the same,
    // and the numbers that changed are exactly the expected ones.
    const changed: string[] = [];
    for (let i = 0; i < original.length; i++) {
      if (copy[i] === original[i]) continue;
      const cut = (l: string) => l.split(/(\d+(?:ms|s|m|h|d)?)/);
      const [a, b] = [cut(original[i]!), cut(copy[i]!)];
      expect(b.length, `line ${i + 1}`).toBe(a.length);
      a.forEach((t, k) => {
        if (k % 2 === 0) expect(b[k], `line ${i + 1}`).toBe(t);
        else if (b[k] !== t) changed.push(`${i + 1}: ${t} -> ${b[k]}`);
      });
    }
    // The 1-based line of `key` in the rule of alert `name`.
    const line = (name: string, key: string) => {
      const start = original.findIndex((l) => l.trim() === `- alert: ${name}`);
      return original.findIndex((l, i) => i > start && l.trimStart().startsWith(key)) + 1;
    };
    const fleet = DEADMAN_ALERTS.fleetGaugesMissing;
    const div = (n: number) => String(n / FACTOR);
    const expected = FULL
      ? []
      : [
          `${line(SILENT.name, "expr:")}: ${DEADMAN_STEP} -> ${STEP_S}s`,
          `${line(SILENT.name, "expr:")}: ${DEADMAN_STEP_SECONDS} -> ${STEP_S}`,
          `${line(SILENT.name, "expr:")}: ${SILENT.threshold.value} -> ${div(SILENT.threshold.value)}`,
          `${line(DOWN.name, "for:")}: ${DOWN.for} -> ${DOWN_FOR_S}s`,
          `${line(fleet.name, "expr:")}: ${DEADMAN_STEP} -> ${STEP_S}s`,
          `${line(fleet.name, "expr:")}: ${DEADMAN_STEP_SECONDS} -> ${STEP_S}`,
          `${line(fleet.name, "expr:")}: ${fleet.threshold.value} -> ${div(fleet.threshold.value)}`,
        ];
    expect(changed.sort()).toEqual(expected.sort());
    expect(scaled.edits).toHaveLength(expected.length);
    expect(execFileSync("/usr/bin/promtool", ["check", "rules", join(dir, "dedup.yml")]).toString()).toMatch(/SUCCESS/);
    // And Prometheus runs those: the dashboard rule holds for the scaled `for`.
    const res = await fetch(`${prom.url}/api/v1/rules?type=alert`);
    const groups = (
      (await res.json()) as { data: { groups: Array<{ rules: Array<{ name: string; duration: number }> }> } }
    ).data.groups;
    expect(groups.flatMap((g) => g.rules).find((r) => r.name === DOWN.name)?.duration).toBe(DOWN_FOR_S);
  });

  it(
    "closing a consumer's exporter fires DedupConsumerSilent for that service once silent for the threshold, never for the one still exporting",
    async () => {
      const stoppedAt = Date.now();
      await gone.stop();
      const fired = await until(
        `${SILENT.name} for ${gone.service}`,
        (SILENT_S + STEP_S + SLACK_S + 30) * 1000,
        async () => firstFiring(SILENT.name, stoppedAt, gone.service),
      );
      const seconds = (fired.at - stoppedAt) / 1000;
      console.log(
        `${SILENT.name}: fired ${seconds.toFixed(1)} s after the exporter stopped (threshold ${SILENT_S} s, step ${STEP_S} s, scrape ${IV} s)`,
      );
      expect(firedBefore(SILENT.name, stoppedAt, gone.service)).toEqual([]);
      expect(seconds).toBeGreaterThanOrEqual(SILENT_S);
      expect(seconds).toBeLessThanOrEqual(SILENT_S + STEP_S + SILENT_FOR_S + SLACK_S);
      const alert = fired.alerts.find((a) => a.state === "firing" && isAlert(a, SILENT.name, gone.service))!;
      expect(alert.labels).toMatchObject({ service: gone.service, severity: SILENT.severity });
      expect(alert.annotations.summary).toBe(
        `${gone.service} stopped exporting its dedup metrics: its dedup alerts cannot fire`,
      );
      expect(new URL(alert.annotations.runbook_url!).hash).toBe(`#${SILENT.runbookAnchor}`);
      const page = new URL(alert.annotations.dashboard_url!);
      expect([page.pathname, page.searchParams.get("service")]).toEqual(["/", gone.service]);
      // The service still exporting never fired, and the dashboard, up all along, did not either.
      expect(firedBefore(SILENT.name, Date.now(), alive.service)).toEqual([]);
      expect(firedBefore(DOWN.name, Date.now())).toEqual([]);
    },
    (SILENT_S + SLACK_S + 90) * 1000,
  );

  it(
    "stopping the dashboard fires DedupDashboardDown once its scrapes failed for the rule's `for`",
    async () => {
      const stoppedAt = Date.now();
      await app.stop();
      const fired = await until(DOWN.name, (DOWN_FOR_S + SLACK_S + 30) * 1000, async () =>
        firstFiring(DOWN.name, stoppedAt),
      );
      const seconds = (fired.at - stoppedAt) / 1000;
      console.log(
        `${DOWN.name}: fired ${seconds.toFixed(1)} s after the app was stopped (for ${DOWN_FOR_S} s, scrape ${IV} s)`,
      );
      expect(firedBefore(DOWN.name, stoppedAt)).toEqual([]);
      expect(seconds).toBeGreaterThanOrEqual(DOWN_FOR_S);
      expect(seconds).toBeLessThanOrEqual(DOWN_FOR_S + SLACK_S);
      const alert = fired.alerts.find((a) => a.state === "firing" && isAlert(a, DOWN.name))!;
      expect(alert.labels).toMatchObject({ job: DASHBOARD_SCRAPE_JOB, severity: DOWN.severity });
      expect(alert.annotations.summary).toMatch(/^The dedup-health dashboard is down \(100% of its targets\)/);
      expect(new URL(alert.annotations.runbook_url!).hash).toBe(`#${DOWN.runbookAnchor}`);
      expect(new URL(alert.annotations.dashboard_url!).pathname).toBe("/");
      // Pending first, from a failed scrape: the `for` was held, not skipped.
      const pending = looks.find((l) => l.at >= stoppedAt && l.alerts.some((a) => isAlert(a, DOWN.name)));
      expect(pending?.alerts.find((a) => isAlert(a, DOWN.name))?.state).toBe("pending");
      expect(firedBefore(SILENT.name, Date.now(), alive.service)).toEqual([]);
    },
    (DOWN_FOR_S + SLACK_S + 90) * 1000,
  );
});
