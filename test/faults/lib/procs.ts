/**
 * Processes the fault suite starts itself (redis-server, a second KRaft broker, consumer workers,
 * the app): each is spawned directly (no shell wrapper, so its pid is the process that does the
 * work), recorded in `.stack/faults/pids/<name>.<pid>` and stopped by that pid. A case stops what it
 * started in `finally`; `scripts/test-faults.sh` stops any pid still recorded when the suite ends,
 * even after a crash of vitest itself.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@/server/testing/net";

/** The repository root. */
export const ROOT = join(__dirname, "..", "..", "..");
/** Everything the suite writes at run time (git-ignored under .stack/). */
export const FAULTS_DIR = join(ROOT, ".stack", "faults");
/** One file per live process the suite started: `<name>.<pid>`. */
export const PIDS_DIR = join(FAULTS_DIR, "pids");
/** Process logs. */
export const LOGS_DIR = join(FAULTS_DIR, "logs");

mkdirSync(PIDS_DIR, { recursive: true });
mkdirSync(LOGS_DIR, { recursive: true });

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export { freePort };

/** True when something accepts TCP connections on 127.0.0.1:`port`. */
export async function portOpen(port: number): Promise<boolean> {
  const { connect } = await import("node:net");
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
    s.setTimeout(1000, () => {
      s.destroy();
      resolve(false);
    });
  });
}

/** A process started by the suite. */
export interface Proc {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal name) once the process exited. */
  readonly exited: Promise<number | string>;
  /** True while it runs. */
  alive(): boolean;
  /** The last ~64 kB of its stdout+stderr. */
  logs(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL now; resolves when it exited. */
  kill9(): Promise<void>;
}

/** Options of {@link startProc}. */
export interface StartProcOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Called with each stdout line. */
  onLine?: (line: string) => void;
}

/** Spawns `cmd args` (no shell), records its pid, keeps its output in memory and in `.stack/faults/logs/<name>.log`. */
export function startProc(name: string, cmd: string, args: readonly string[], o: StartProcOptions = {}): Proc {
  const child = spawn(cmd, [...args], {
    cwd: o.cwd ?? ROOT,
    env: o.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`${name}: ${cmd} did not start (is it installed?)`);
  const pid = child.pid;
  const pidFile = join(PIDS_DIR, `${name.replace(/[^A-Za-z0-9_.-]/g, "_")}.${pid}`);
  writeFileSync(pidFile, `${pid}\n`);
  const log = createWriteStream(join(LOGS_DIR, `${name.replace(/[^A-Za-z0-9_.-]/g, "_")}.log`), { flags: "a" });
  let out = "";
  let partial = "";
  const keep = (d: Buffer) => {
    const s = d.toString();
    out = (out + s).slice(-65_536);
    log.write(s);
  };
  child.stdout!.on("data", (d: Buffer) => {
    keep(d);
    if (o.onLine) {
      partial += d.toString();
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines) o.onLine(l);
    }
  });
  child.stderr!.on("data", keep);
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      try {
        unlinkSync(pidFile);
      } catch {
        /* already gone */
      }
      log.end();
      resolve(code ?? signal ?? "unknown");
    });
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const p: Proc = {
    name,
    pid,
    child,
    exited,
    alive,
    logs: () => out,
    async stop(graceMs = 10_000) {
      if (!alive()) return;
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        return;
      }
      const t = setTimeout(() => {
        if (alive()) process.kill(pid, "SIGKILL");
      }, graceMs);
      await exited;
      clearTimeout(t);
    },
    async kill9() {
      if (!alive()) return;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        return;
      }
      await exited;
    },
  };
  return p;
}

/** Stops every process in `procs` (in parallel), ignoring those already gone. */
export async function stopAll(procs: Iterable<Proc | undefined | null>): Promise<void> {
  await Promise.allSettled([...procs].filter((p): p is Proc => !!p).map((p) => p.stop()));
}

/** Pids still recorded under `.stack/faults/pids` (what test-faults.sh stops at the end). */
export function recordedPids(): number[] {
  if (!existsSync(PIDS_DIR)) return [];
  return readdirSync(PIDS_DIR)
    .map((f) => Number(f.slice(f.lastIndexOf(".") + 1)))
    .filter((n) => Number.isInteger(n) && n > 1);
}

/** Removes a directory tree (data dirs of a run). */
export function rmrf(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
