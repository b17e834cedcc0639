import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./net";
import { startOwnServer } from "./own-server";

/** A private Prometheus (Debian's 2.42) for a test, stopped by pid. */
export interface OwnPrometheus {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `/usr/bin/prometheus` on a random port with a temporary config scraping `targets` every
 * `intervalSec` (rules evaluated as often) at `metricsPath` (default `/metrics`), loading
 * `ruleFiles` (absolute paths: Prometheus reads relative ones from the config's temp dir), sending
 * alerts to `alertmanagers` (host:port), storage in a temp dir removed on stop — or in `storage`, a
 * directory of the caller's that outlives stop, so that Prometheus started again on it (and on the
 * stopped one's `port`) keeps its history, as a restarted Prometheus does. `backfill`
 * (OpenMetrics with timestamps) is written into the storage first with
 * `promtool tsdb create-blocks-from openmetrics`. `more` scrapes other targets at another path in a
 * job of its own each (e.g. the dashboard's `/api/metrics` beside consumers' `/metrics`). Waits for `/-/ready`.
 */
export async function startOwnPrometheus(opts: {
  targets: string[];
  ruleFiles: string[];
  intervalSec?: number;
  backfill?: string;
  metricsPath?: string;
  alertmanagers?: string[];
  port?: number;
  storage?: string;
  more?: ReadonlyArray<{ job: string; targets: string[]; metricsPath: string }>;
  /** Scrape jobs given whole (e.g. a job of infra/prometheus/prometheus.yml with its relabelling), written as JSON. */
  jobs?: readonly unknown[];
}): Promise<OwnPrometheus> {
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "observe-prom-"));
  const data = opts.storage ?? join(dir, "data");
  if (opts.backfill !== undefined) {
    writeFileSync(join(dir, "backfill.om"), opts.backfill);
    execFileSync("/usr/bin/promtool", ["tsdb", "create-blocks-from", "openmetrics", join(dir, "backfill.om"), data], {
      stdio: "ignore",
    });
  }
  const iv = `${opts.intervalSec ?? 1}s`;
  const cfg = [
    "global:",
    `  scrape_interval: ${iv}`,
    `  evaluation_interval: ${iv}`,
    "rule_files:",
    ...opts.ruleFiles.map((f) => `  - ${JSON.stringify(f)}`),
    ...(opts.alertmanagers?.length
      ? [
          "alerting:",
          "  alertmanagers:",
          "    - static_configs:",
          `        - targets: [${opts.alertmanagers.map((t) => JSON.stringify(t)).join(", ")}]`,
        ]
      : []),
    "scrape_configs:",
    "  - job_name: app",
    `    metrics_path: ${opts.metricsPath ?? "/metrics"}`,
    "    static_configs:",
    `      - targets: [${opts.targets.map((t) => JSON.stringify(t)).join(", ")}]`,
    ...(opts.more ?? []).flatMap((j) => [
      `  - job_name: ${JSON.stringify(j.job)}`,
      `    metrics_path: ${j.metricsPath}`,
      "    static_configs:",
      `      - targets: [${j.targets.map((t) => JSON.stringify(t)).join(", ")}]`,
    ]),
    ...(opts.jobs ?? []).map((j) => `  - ${JSON.stringify(j)}`),
    "",
  ].join("\n");
  writeFileSync(join(dir, "prometheus.yml"), cfg);
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${data}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn",
  ];
  const { pid, stop } = await startOwnServer("/usr/bin/prometheus", args, `${url}/-/ready`, {
    install: "apt-get install prometheus",
    dir,
  });
  return { url, pid, stop };
}

/** One sample of an instant query's answer. */
export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

/**
 * The instant query `expr` against the Prometheus-compatible store at `url` (Prometheus or
 * VictoriaMetrics, their HTTP API), now or at `atMs`: the samples, [] when none. A query the store
 * refuses (bad PromQL) throws with the store's own error text.
 */
export async function promQuery(url: string, expr: string, atMs?: number): Promise<PromSample[]> {
  const q = new URLSearchParams({ query: expr });
  if (atMs !== undefined) q.set("time", String(atMs / 1000));
  const res = await fetch(`${url}/api/v1/query?${q}`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json().catch(() => ({}))) as {
    error?: string;
    data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  if (!res.ok || !body.data) throw new Error(`${url} answered ${res.status} to ${expr}: ${body.error ?? "no data"}`);
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}

/** One alert as Prometheus' `/api/v1/alerts` lists it (pending or firing). */
export interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: "pending" | "firing";
}

/** The alerts the Prometheus at `url` holds now (its `/api/v1/alerts`). */
export async function promAlerts(url: string): Promise<PromAlert[]> {
  const res = await fetch(`${url}/api/v1/alerts`, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`Prometheus ${url} answered ${res.status} to /api/v1/alerts`);
  return ((await res.json()) as { data: { alerts: PromAlert[] } }).data.alerts;
}
