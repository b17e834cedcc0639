import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@/server/testing/net";

/** A private Alertmanager (Debian's prometheus-alertmanager 0.25) for a test, stopped by pid. */
export interface OwnAlertmanager {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The Debian package's binary (upstream calls it `alertmanager`). */
export const ALERTMANAGER_BIN = "/usr/bin/prometheus-alertmanager";

/**
 * Starts Alertmanager on a free loopback port with `configFile` (default: a route to a receiver
 * that sends nothing), storage in a temp dir removed on stop, no HA cluster. Waits for `/-/ready`.
 */
export async function startOwnAlertmanager(opts: { configFile?: string } = {}): Promise<OwnAlertmanager> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "observe-am-"));
  let cfg = opts.configFile;
  if (!cfg) {
    cfg = join(dir, "alertmanager.yml");
    writeFileSync(cfg, "route:\n  receiver: none\nreceivers:\n  - name: none\n");
  }
  const child: ChildProcess = spawn(
    ALERTMANAGER_BIN,
    [`--config.file=${cfg}`, `--storage.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--cluster.listen-address=", "--log.level=warn"],
    { stdio: "ignore" },
  );
  if (!child.pid) throw new Error("alertmanager did not start: apt-get install prometheus-alertmanager");
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) {
      process.kill(pid, "SIGTERM");
      const t = setTimeout(() => child.exitCode === null && process.kill(pid, "SIGKILL"), 5000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(500) });
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`alertmanager on port ${port} not ready within 20 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, pid, stop };
}
