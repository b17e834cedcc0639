import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./redis-server";

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
  const cfg = ["global:", `  scrape_interval: ${iv}`, "scrape_configs:", "  - job_name: app", "    metrics_path: /metrics", "    static_configs:"];
  cfg.push(`      - targets: [${opts.targets.map((t) => JSON.stringify(t)).join(", ")}]`, "");
  writeFileSync(join(dir, "scrape.yml"), cfg.join("\n"));
  const url = `http://127.0.0.1:${port}`;
  const children: ChildProcess[] = [];
  const start = (bin: string, args: string[]) => {
    const child = spawn(bin, [...args, "-loggerLevel=ERROR"], { stdio: "ignore" });
    if (!child.pid) throw new Error(`${bin} did not start: apt-get install victoria-metrics`);
    children.push(child);
  };
  const stop = async () => {
    await Promise.all(children.map((c) => stopChild(c)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    start("/usr/bin/victoria-metrics", [
      `-storageDataPath=${join(dir, "data")}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      `-promscrape.config=${join(dir, "scrape.yml")}`,
      `-search.latencyOffset=${iv}`,
      ...(rules.length ? [`-vmalert.proxyURL=http://127.0.0.1:${alertPort}`] : []),
    ]);
    await ready(`${url}/-/ready`, children[0]!);
    if (opts.backfill !== undefined) {
      const r = await fetch(`${url}/api/v1/import/prometheus`, { method: "POST", body: opts.backfill });
      if (!r.ok) throw new Error(`victoria-metrics import answered HTTP ${r.status}: ${await r.text()}`);
      // Imported samples are searchable once flushed (about a second otherwise).
      await fetch(`${url}/internal/force_flush`);
    }
    if (rules.length) {
      start("/usr/bin/vmalert", [
        ...rules.map((f) => `-rule=${f}`),
        `-datasource.url=${url}`,
        `-httpListenAddr=127.0.0.1:${alertPort}`,
        `-evaluationInterval=${iv}`,
        // vmalert refuses alerting rules without a notifier; nothing listens there (the rule state is what is read).
        `-notifier.url=http://127.0.0.1:${nowhere}`,
      ]);
      await ready(`http://127.0.0.1:${alertPort}/-/ready`, children[1]!);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, pids: children.map((c) => c.pid!), stop };
}

async function ready(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(500) });
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${url} not ready within 20 s (exit code ${child.exitCode})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.kill(child.pid!, "SIGTERM");
  const t = setTimeout(() => child.exitCode === null && process.kill(child.pid!, "SIGKILL"), 5000);
  await exited;
  clearTimeout(t);
}
