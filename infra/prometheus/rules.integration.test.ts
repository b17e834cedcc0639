/**
 * The generated rule file in a real Prometheus (Debian's 2.42), scraping the dedup library's metrics:
 * the expressions match the exposition format (`_bucket`, label names), the rules load, and the
 * alerts go pending for the unhealthy series only. Starts its own Prometheus on a free port with a
 * 1 s scrape/evaluation interval and stops it by pid; needs no other service.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Gauge, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_SCRAPE_JOB } from "@/lib/alert-exprs";
import { DEADMAN_ALERTS } from "@/lib/deadman-alerts";
import { ALERT_LIST, ALERTS } from "@/lib/thresholds";
import { runbookUrl } from "@/lib/alert-model";
import { runbookBase } from "@/scripts/gen-infra";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { OBSERVE_METRIC_LABELS, OBSERVE_METRIC_NAMES } from "@/names/observe";
import { dedupRecorder } from "@/server/dedup";
import { freePort } from "@/server/testing/net";
import { promQuery } from "@/server/testing/own-prometheus";

const PROMETHEUS = process.env.PROMETHEUS_BIN ?? "/usr/bin/prometheus";
const RULES = fileURLToPath(new URL("./rules/dedup.yml", import.meta.url));

interface ApiAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}
interface ApiRule {
  name: string;
  health: string;
  lastError?: string;
  alerts: ApiAlert[];
}

// The library's own recorder: the exposition Prometheus scrapes is the one the services emit.
const registry = new Registry();
const slow = dedupRecorder(registry, "slow");
const calm = dedupRecorder(registry, "calm");
// The dashboard's own gauges the rules read too: a lost dedup memory and the consumer groups' lag.
const memoryLost = new Gauge({
  name: OBSERVE_METRIC_NAMES.memoryLost,
  help: "share of keys lost",
  labelNames: [...OBSERVE_METRIC_LABELS.memoryLost],
  registers: [registry],
});
const lagSum = new Gauge({
  name: KAFKA_METRIC_NAMES.lagSum,
  help: "consumer group lag",
  labelNames: ["consumergroup", "topic"],
  registers: [registry],
});
const dlqOldestOpen = new Gauge({
  name: OBSERVE_METRIC_NAMES.dlqOldestOpenAge,
  help: "age of the oldest open DLQ record",
  labelNames: [...OBSERVE_METRIC_LABELS.dlqOldestOpenAge],
  registers: [registry],
});

/** One tick of traffic: "slow" service 20% duplicates and ~80 ms checks; "calm" 1% and 2 ms. */
function tick(n: number): void {
  for (let i = 0; i < 8; i++) slow.result("review.created", "on-review-created", "success");
  for (let i = 0; i < 2; i++) slow.result("review.created", "on-review-created", "deduplicated");
  for (let i = 0; i < 99; i++) calm.result("order.paid", "on-order-paid", "success");
  calm.result("order.paid", "on-order-paid", "deduplicated");
  for (let i = 0; i < 20; i++) {
    slow.check("on-review-created", performance.now(), 0.08);
    calm.check("on-order-paid", performance.now(), 0.002);
  }
  if (n % 5 === 0) slow.error("redis_timeout", "on-review-created");
  // A success after a lost lease every 5 s once Prometheus scrapes (its first scrape comes ~5 s in;
  // the series exists at 0 from the first tick, so the first one is an increase).
  if (n >= 40 && n % 25 === 0) slow.leaseLost("review.created", "on-review-created");
  // A publisher reusing a UUID with another payload, once in a while (the series is 0 from registration).
  if (n >= 40 && n % 25 === 10) slow.payloadConflict("on-review-created", "fields");
  // "slow" lost 60 % of its keys at once (Redis restarted empty); "calm" lost none.
  memoryLost.set({ service: "slow", handler: "on-review-created" }, 0.6);
  memoryLost.set({ service: "calm", handler: "on-order-paid" }, 0);
  // slow's group falls behind by 10 messages/s above the floor; calm's lag stays at 3.
  lagSum.set({ consumergroup: "slow.on-review-created", topic: "review.created" }, 500 + 2 * n);
  lagSum.set({ consumergroup: "calm.on-order-paid", topic: "order.paid" }, 3);
  // slow's DLQ has held an open record for 25 h; calm's oldest open one is a minute old.
  dlqOldestOpen.set({ topic: "review.created" }, 25 * 3600);
  dlqOldestOpen.set({ topic: "order.paid" }, 60);
}

let server: Server | undefined;
let prom: ChildProcess | undefined;
let promLog = "";
let dir = "";
let timer: NodeJS.Timeout | undefined;
let base = "";

beforeAll(async () => {
  if (!existsSync(PROMETHEUS)) {
    throw new Error(`prometheus not found at ${PROMETHEUS}: apt-get install prometheus (or set PROMETHEUS_BIN)`);
  }
  let n = 0;
  tick(n);
  timer = setInterval(() => tick(++n), 200);
  server = createServer((_req, res) => {
    void registry.metrics().then((body) => {
      res.writeHead(200, { "content-type": registry.contentType });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const appPort = (server.address() as AddressInfo).port;
  const promPort = await freePort();
  base = `http://127.0.0.1:${promPort}`;
  dir = mkdtempSync(join(tmpdir(), "dedup-rules-"));
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    [
      "global: { scrape_interval: 1s, evaluation_interval: 1s }",
      `rule_files: ["${RULES}"]`,
      "scrape_configs:",
      // The dashboard's job: its gauges come from this exporter, so the deadman rules see a live dashboard.
      `  - job_name: ${DASHBOARD_SCRAPE_JOB}`,
      `    static_configs: [{ targets: ["127.0.0.1:${appPort}"] }]`,
      "",
    ].join("\n"),
  );
  prom = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  prom.stdout?.on("data", (b: Buffer) => (promLog += b.toString()));
  prom.stderr?.on("data", (b: Buffer) => (promLog += b.toString()));
});

afterAll(async () => {
  if (timer) clearInterval(timer);
  if (prom?.pid && prom.exitCode === null) {
    const exited = new Promise((r) => prom?.once("exit", r));
    process.kill(prom.pid, "SIGTERM");
    await exited;
  }
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function rules(): Promise<ApiRule[]> {
  const res = await fetch(`${base}/api/v1/rules?type=alert`);
  const body = (await res.json()) as { data: { groups: { rules: ApiRule[] }[] } };
  return body.data.groups.flatMap((g) => g.rules);
}

/** The deadman rules: silent here, where every exporter and the dashboard's job are up. */
const DEADMAN = new Set<string>(Object.values(DEADMAN_ALERTS).map((a) => a.name));

/** Polls until every alert but the deadman ones has at least one active instance (they all should within seconds). */
async function waitForActive(timeoutMs: number): Promise<ApiRule[]> {
  const deadline = Date.now() + timeoutMs;
  let last: ApiRule[] = [];
  while (Date.now() < deadline) {
    try {
      last = await rules();
      if (
        last.length === ALERT_LIST.length &&
        last.filter((r) => !DEADMAN.has(r.name)).every((r) => r.alerts.length > 0)
      )
        return last;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`alerts not active after ${timeoutMs} ms: ${JSON.stringify(last)}\n${promLog.slice(-2000)}`);
}

describe("dedup rules in a real Prometheus", () => {
  it("load healthy and go pending for the unhealthy series only, with rendered annotations", async () => {
    const all = await waitForActive(30_000);
    const byName = Object.fromEntries(all.map((r) => [r.name, r]));
    for (const r of all) expect(r.health, r.lastError).toBe("ok");

    const dup = byName[ALERTS.duplicateRate.name]?.alerts ?? [];
    expect(dup.map((a) => [a.labels.service, a.labels.topic, a.labels.handler, a.state])).toEqual([
      ["slow", "review.created", "on-review-created", "pending"],
    ]);
    expect(dup[0]?.annotations.description).toMatch(/^20% of the messages on topic review\.created/);
    expect(dup[0]?.annotations.runbook_url).toBe(runbookUrl(ALERTS.duplicateRate.runbookAnchor, runbookBase()));

    const err = byName[ALERTS.redisErrors.name]?.alerts ?? [];
    expect(err.map((a) => [a.labels.service, a.labels.reason])).toEqual([["slow", "redis_timeout"]]);
    // The Go template picked the Redis text for a redis_* reason (marshal has its own: first-error.integration.test.ts).
    expect(err[0]?.annotations.summary).toBe("Dedup checks failing on slow: redis_timeout (Redis or the consumer)");
    expect(err[0]?.annotations.description).toMatch(
      /failed with reason redis_timeout .+: Redis or the consumer .+Fail-open.+fail-closed/,
    );

    const lat = byName[ALERTS.redisLatency.name]?.alerts ?? [];
    expect(lat.map((a) => [a.labels.service, a.labels.severity])).toEqual([["slow", "ticket"]]);
    expect(lat[0]?.annotations.description).toMatch(/is \d+(\.\d+)?ms over the last 5 minutes/);

    // for: 0m — the lost lease pages at once, for the one handler whose counter moved.
    const lease = byName[ALERTS.leaseLost.name]?.alerts ?? [];
    expect(lease.map((a) => [a.labels.service, a.labels.handler, a.labels.severity, a.state])).toEqual([
      ["slow", "on-review-created", "page", "firing"],
    ]);
    expect(lease[0]?.annotations.summary).toBe(
      "Lease lost on slow/on-review-created: a message may have been processed twice",
    );

    // for: 0m — a reused UUID with another payload fires at once, for that handler only.
    const conflict = byName[ALERTS.payloadConflict.name]?.alerts ?? [];
    expect(conflict.map((a) => [a.labels.service, a.labels.handler, a.state])).toEqual([
      ["slow", "on-review-created", "firing"],
    ]);
    expect(conflict[0]?.annotations.summary).toBe(
      "A publisher reuses message UUIDs: payload conflicts on slow/on-review-created",
    );

    // for: 0m — a lost dedup memory pages at once, for the handler that lost its keys only.
    const lost = byName[ALERTS.memoryLost.name]?.alerts ?? [];
    expect(lost.map((a) => [a.labels.service, a.labels.handler, a.labels.severity, a.state])).toEqual([
      ["slow", "on-review-created", "page", "firing"],
    ]);
    expect(lost[0]?.annotations.summary).toBe("Dedup memory lost on slow/on-review-created: 60% of its keys gone");

    // for: 10m — a growing lag above the floor goes pending for that group only; a small flat lag never does.
    const lag = byName[ALERTS.consumerLagGrowing.name]?.alerts ?? [];
    expect(lag.map((a) => [a.labels.service, a.labels.handler, a.labels.topic, a.state])).toEqual([
      ["slow", "on-review-created", "review.created", "pending"],
    ]);

    // for: 10m — a DLQ whose oldest open record is older than 24 h goes pending for that topic only, its link to the DLQ page.
    const stale = byName[ALERTS.dlqBacklogStale.name]?.alerts ?? [];
    expect(stale.map((a) => [a.labels.topic, a.labels.severity, a.state])).toEqual([
      ["review.created", "ticket", "pending"],
    ]);
    expect(stale[0]?.annotations.dashboard_url).toMatch(/\/dlq\?topic=review\.created\.dlq/);

    // The deadman rules evaluate (health ok above) and stay silent: the consumers export, the dashboard's job is up with its gauges.
    for (const name of DEADMAN) expect(byName[name]?.alerts, name).toEqual([]);
  });

  it("computes the duplicate ratio the dashboard plots: 0.2 and 0.01", async () => {
    const ratio = Object.fromEntries(
      (await promQuery(base, ALERTS.duplicateRate.valueExpr)).map((s) => [s.metric.handler, s.value]),
    );
    expect(ratio["on-review-created"]).toBeCloseTo(0.2, 6);
    expect(ratio["on-order-paid"]).toBeCloseTo(0.01, 6);
  });

  // Last: it stops the exporter. The deadman rules rest on this: a target that stops answering has
  // its series marked stale at the failed scrape, so "seen before, now gone" holds at once.
  it("once the dashboard's exporter stops: its series are gone at the next scrape, DedupDashboardDown's value is 1 and it goes pending", async () => {
    const s = server;
    server = undefined;
    s?.closeAllConnections();
    await new Promise((r) => s?.close(r));
    const deadline = Date.now() + 15_000;
    let seen: { present: number; down: number[]; pending: boolean } = { present: -1, down: [], pending: false };
    while (Date.now() < deadline) {
      const present = (
        await promQuery(
          base,
          `group by (service) (${OBSERVE_METRIC_NAMES.memoryLost} or deduplication_check_duration_seconds_count)`,
        )
      ).length;
      const down = (await promQuery(base, ALERTS.dashboardDown.valueExpr)).map((x) => x.value);
      const pending = ((await rules()).find((r) => r.name === ALERTS.dashboardDown.name)?.alerts ?? []).some(
        (a) => a.state === "pending" && a.labels.job === DASHBOARD_SCRAPE_JOB,
      );
      seen = { present, down, pending };
      if (present === 0 && down[0] === 1 && pending) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(seen).toEqual({ present: 0, down: [1], pending: true });
  }, 30_000);
});
