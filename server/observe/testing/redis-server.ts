import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

/** A private `redis-server` for a test or the bench, on a free random port, stopped by pid. */
export interface OwnRedis {
  port: number;
  url: string;
  pid: number;
  /** Stops the server (SIGTERM to its pid, then SIGKILL after 3 s). */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Options of {@link startOwnRedis}. */
export interface OwnRedisOptions {
  /** Extra `redis-server` arguments. @default [] */
  args: string[];
  /**
   * Run under `chrt -f 1` (SCHED_FIFO) when available, so SLOWLOG (wall time) measures what a
   * command costs rather than the time the process sat preempted on a busy shared machine, where
   * even a PTTL was seen at 7 ms. Falls back to normal scheduling.
   * @default false
   */
  realtime: boolean;
}

/**
 * Starts Debian's `redis-server` with no persistence on a random port, with
 * `slowlog-log-slower-than 5000` (µs) so a test can read `SLOWLOG GET`, and waits for PING.
 */
export async function startOwnRedis(opts: Partial<OwnRedisOptions> = {}): Promise<OwnRedis> {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--slowlog-log-slower-than", "5000", ...(opts.args ?? [])];
  const rt = opts.realtime === true && spawnSync("chrt", ["-f", "1", "true"]).status === 0;
  const child: ChildProcess = rt ? spawn("chrt", ["-f", "1", "redis-server", ...args], { stdio: "ignore" }) : spawn("redis-server", args, { stdio: "ignore" });
  if (!child.pid) throw new Error("redis-server did not start: is it installed (apt-get install redis-server)?");
  const pid = child.pid;
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 300, retryStrategy: () => null });
    probe.on("error", () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port,
    url,
    pid,
    async stop() {
      if (child.exitCode !== null) return;
      process.kill(pid, "SIGTERM");
      const t = setTimeout(() => {
        if (child.exitCode === null) process.kill(pid, "SIGKILL");
      }, 3000);
      await exited;
      clearTimeout(t);
    },
  };
}
