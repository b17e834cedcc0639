import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./net";
import { startOwnServer } from "./own-server";

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
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${cfg}`,
    `--storage.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--cluster.listen-address=",
    "--log.level=warn",
  ];
  const { pid, stop } = await startOwnServer(ALERTMANAGER_BIN, args, `${url}/-/ready`, {
    install: "apt-get install prometheus-alertmanager",
    dir,
  });
  return { url, pid, stop };
}
