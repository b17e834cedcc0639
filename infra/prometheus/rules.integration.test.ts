/**
 * The generated rule file in a real Prometheus (Debian's 2.42), scraping real prom-client output:
 * the expressions match the exposition format (`_bucket`, label names), the rules load, and the
 * alerts go pending for the unhealthy series only. Starts its own Prometheus on a free port with a
 * 1 s scrape/evaluation interval and stops it by pid; needs no other service.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Counter, Histogram, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERTS, METRIC_LABELS, METRIC_NAMES } from "@/lib/thresholds";

const PROMETHEUS = process.env.PROMETHEUS_BIN ?? "/usr/bin/prometheus";
const RULES = fileURLToPath(new URL("./rules/dedup.yml", import.meta.url));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

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

const registry = new Registry();
const deduplicated = new Counter({ name: METRIC_NAMES.deduplicated, help: "h", labelNames: METRIC_LABELS.messages_deduplicated_total, registers: [registry] });
const processed = new Counter({ name: METRIC_NAMES.processed, help: "h", labelNames: METRIC_LABELS.messages_processed_total, registers: [registry] });
const errors = new Counter({ name: METRIC_NAMES.errors, help: "h", labelNames: METRIC_LABELS.deduplication_errors_total, registers: [registry] });
const duration = new Histogram({
  name: METRIC_NAMES.checkDuration,
  help: "h",
  labelNames: METRIC_LABELS.deduplication_check_duration_seconds,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
  registers: [registry],
});

/** One tick of traffic: "noisy" handler 20% duplicates, "calm" 1%; "slow" service ~80 ms checks, "calm" 2 ms. */
function tick(n: number): void {
  const noisy = { service: "slow", topic: "review.created", handler: "on-review-created" };
  const calm = { service: "calm", topic: "order.paid", handler: "on-order-paid" };
  processed.inc({ ...noisy, result: "success" }, 8);
  processed.inc({ ...noisy, result: "deduplicated" }, 2);
  deduplicated.inc(noisy, 2);
  processed.inc({ ...calm, result: "success" }, 99);
  processed.inc({ ...calm, result: "deduplicated" }, 1);
  deduplicated.inc(calm, 1);
  for (let i = 0; i < 20; i++) {
    duration.observe({ service: "slow" }, 0.08);
    duration.observe({ service: "calm" }, 0.002);
  }
  errors.inc({ service: "calm", reason: "redis_conn" }, 0); // present, never increasing: no alert
  if (n % 5 === 0) errors.inc({ service: "slow", reason: "redis_timeout" });
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
      `  - job_name: app`,
      `    static_configs: [{ targets: ["127.0.0.1:${appPort}"] }]`,
      "",
    ].join("\n"),
  );
  prom = spawn(
    PROMETHEUS,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${promPort}`],
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

/** Polls until every alert has at least one active instance (they all should within seconds). */
async function waitForActive(timeoutMs: number): Promise<ApiRule[]> {
  const deadline = Date.now() + timeoutMs;
  let last: ApiRule[] = [];
  while (Date.now() < deadline) {
    try {
      last = await rules();
      if (last.length === 3 && last.every((r) => r.alerts.length > 0)) return last;
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
    expect(dup[0]?.annotations.runbook_url).toBe(ALERTS.duplicateRate.runbookUrl);

    const err = byName[ALERTS.redisErrors.name]?.alerts ?? [];
    expect(err.map((a) => [a.labels.service, a.labels.reason])).toEqual([["slow", "redis_timeout"]]);

    const lat = byName[ALERTS.redisLatency.name]?.alerts ?? [];
    expect(lat.map((a) => [a.labels.service, a.labels.severity])).toEqual([["slow", "ticket"]]);
    expect(lat[0]?.annotations.description).toMatch(/is \d+(\.\d+)?ms over the last 5 minutes/);
  });

  it("computes the duplicate ratio the dashboard plots: 0.2 and 0.01", async () => {
    const q = encodeURIComponent(ALERTS.duplicateRate.valueExpr);
    const res = await fetch(`${base}/api/v1/query?query=${q}`);
    const body = (await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    const ratio = Object.fromEntries(body.data.result.map((s) => [s.metric.handler, Number(s.value[1])]));
    expect(ratio["on-review-created"]).toBeCloseTo(0.2, 6);
    expect(ratio["on-order-paid"]).toBeCloseTo(0.01, 6);
  });
});
