import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./net";
import { startOwnServer, type OwnServer } from "./own-server";

/** A private VictoriaMetrics single-node (Debian's `victoria-metrics`), with vmalert when asked. */
export interface OwnVictoriaMetrics {
  /** What `PROMETHEUS_URL` would be set to. */
  url: string;
  /** Process ids: VictoriaMetrics first, then vmalert when started. */
  pids: number[];
  stop(): Promise<void>;
}

/** Options of {@link startOwnVictoriaMetrics}. */
export interface OwnVictoriaMetricsOptions {
  /** `host:port` targets scraped at `/metrics`. */
  targets: string[];
  /** Scrape (and rule evaluation) interval. @default 1 */
  intervalSec?: number;
  /** Rule files for a vmalert started beside it (VictoriaMetrics proxies `/api/v1/rules` to it); none = no vmalert. @default [] */
  ruleFiles?: string[];
  /** Samples imported before vmalert starts (Prometheus text, timestamps in ms, `/api/v1/import/prometheus`). @default none */
  backfill?: string;
}

/**
 * Starts `/usr/bin/victoria-metrics` on a free port scraping `targets` (its own `-promscrape.config`)
 * with data in a temp dir removed on stop, and `-search.latencyOffset` of one interval instead of
 * the 30 s default (VictoriaMetrics otherwise answers an instant query "now" as of 30 s ago; see
 * docs/METRICS-STORES.md). `backfill` is imported first. With `ruleFiles`, `/usr/bin/vmalert` evaluates them against it and
 * VictoriaMetrics proxies the alerting API to it (`-vmalert.proxyURL`). Waits until both answer.
 */
export async function startOwnVictoriaMetrics(opts: OwnVictoriaMetricsOptions): Promise<OwnVictoriaMetrics> {
  const iv = `${opts.intervalSec ?? 1}s`;
  const rules = opts.ruleFiles ?? [];
  const [port, alertPort, nowhere] = [await freePort(), rules.length ? await freePort() : 0, await freePort()];
  const dir = mkdtempSync(join(tmpdir(), "observe-vm-"));
  const cfg = [
    "global:",
    `  scrape_interval: ${iv}`,
    "scrape_configs:",
    "  - job_name: app",
    "    metrics_path: /metrics",
    "    static_configs:",
  ];
  cfg.push(`      - targets: [${opts.targets.map((t) => JSON.stringify(t)).join(", ")}]`, "");
  writeFileSync(join(dir, "scrape.yml"), cfg.join("\n"));
  const url = `http://127.0.0.1:${port}`;
  const servers: OwnServer[] = [];
  const start = async (bin: string, args: string[], readyUrl: string) => {
    servers.push(
      await startOwnServer(bin, [...args, "-loggerLevel=ERROR"], readyUrl, {
        install: "apt-get install victoria-metrics",
      }),
    );
  };
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const vmArgs = [
      `-storageDataPath=${join(dir, "data")}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      `-promscrape.config=${join(dir, "scrape.yml")}`,
      `-search.latencyOffset=${iv}`,
    ];
    await start(
      "/usr/bin/victoria-metrics",
      [...vmArgs, ...(rules.length ? [`-vmalert.proxyURL=http://127.0.0.1:${alertPort}`] : [])],
      `${url}/-/ready`,
    );
    if (opts.backfill !== undefined) {
      const r = await fetch(`${url}/api/v1/import/prometheus`, { method: "POST", body: opts.backfill });
      if (!r.ok) throw new Error(`victoria-metrics import answered HTTP ${r.status}: ${await r.text()}`);
      // Imported samples are searchable once flushed (about a second otherwise).
      await fetch(`${url}/internal/force_flush`);
    }
    if (rules.length) {
      const alertArgs = [
        ...rules.map((f) => `-rule=${f}`),
        `-datasource.url=${url}`,
        `-httpListenAddr=127.0.0.1:${alertPort}`,
        `-evaluationInterval=${iv}`,
      ];
      // vmalert refuses alerting rules without a notifier; nothing listens there (the rule state is what is read).
      await start(
        "/usr/bin/vmalert",
        [...alertArgs, `-notifier.url=http://127.0.0.1:${nowhere}`],
        `http://127.0.0.1:${alertPort}/-/ready`,
      );
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, pids: servers.map((s) => s.pid), stop };
}
