import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { freePort, waitForRedisPing } from "@/server/testing/net";

/** A private `redis-server` for a test or the bench, on a free random port, stopped by pid. */
export interface OwnRedis {
  port: number;
  url: string;
  pid: number;
  /** Stops the server (SIGTERM to its pid, then SIGKILL after 3 s). */
  stop(): Promise<void>;
}

export { freePort };

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
  try {
    await waitForRedisPing(url, { timeoutMs: 10_000 });
  } catch {
    child.kill("SIGKILL");
    throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
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
