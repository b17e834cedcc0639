/**
 * Starts a private server process for a test or a bench (redis-server, Prometheus, Alertmanager,
 * VictoriaMetrics, vmalert): spawn it, wait until it answers, stop it by its pid. Every `own-*.ts`
 * helper goes through {@link startOwnServer}, so a server that never answers is stopped, not leaked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";

/** A server process started by {@link startOwnServer}. */
export interface OwnServer {
  pid: number;
  /** SIGTERM to the pid, SIGKILL after `killAfterMs`; resolves once it exited; then removes `dir`. */
  stop(): Promise<void>;
}

/** Options of {@link startOwnServer}. */
export interface OwnServerOptions {
  /** What to install when the binary is missing, for the error, e.g. `apt-get install prometheus`. */
  install: string;
  /** A temporary directory of the server, removed after it stopped. @default none */
  dir?: string;
  /** Give up waiting for the ready answer after this long. @default 20000 */
  readyTimeoutMs?: number;
  /** SIGKILL when SIGTERM did not end the process within this long. @default 5000 */
  killAfterMs?: number;
}

/** Readiness: an HTTP URL that answers 2xx once the server is up, or a wait of one's own (PING). */
export type ReadyCheck = string | ((alive: () => boolean, timeoutMs: number) => Promise<void>);

/**
 * Spawns `bin args` (stdio ignored) and waits until `ready` holds: the URL answers 2xx (polled
 * every 100 ms), or the given wait resolves. Throws, after stopping the process, when the process
 * exits first or `readyTimeoutMs` passes.
 */
export async function startOwnServer(
  bin: string,
  args: readonly string[],
  ready: ReadyCheck,
  opts: OwnServerOptions,
): Promise<OwnServer> {
  const child: ChildProcess = spawn(bin, [...args], { stdio: "ignore" });
  child.once("error", () => {}); // a missing binary: reported below by the missing pid
  if (!child.pid) {
    if (opts.dir) rmSync(opts.dir, { recursive: true, force: true });
    throw new Error(`${bin} did not start: ${opts.install}`);
  }
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (alive()) {
      process.kill(pid, "SIGTERM");
      const t = setTimeout(() => alive() && process.kill(pid, "SIGKILL"), opts.killAfterMs ?? 5000);
      await exited;
      clearTimeout(t);
    }
    if (opts.dir) rmSync(opts.dir, { recursive: true, force: true });
  };
  const timeoutMs = opts.readyTimeoutMs ?? 20_000;
  try {
    if (typeof ready === "string") await waitForHttpOk(ready, alive, timeoutMs);
    else await ready(alive, timeoutMs);
  } catch (e) {
    await stop();
    throw new Error(`${bin} ${e instanceof Error ? e.message : String(e)}`);
  }
  return { pid, stop };
}

async function waitForHttpOk(url: string, alive: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(500) });
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    if (!alive()) throw new Error(`exited before ${url} answered`);
    if (Date.now() > deadline) throw new Error(`not ready within ${timeoutMs / 1000} s (${url})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
