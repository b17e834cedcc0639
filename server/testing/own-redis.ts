import { spawnSync } from "node:child_process";
import { freePort, waitForRedisPing } from "./net";
import { startOwnServer } from "./own-server";

/** A private `redis-server` for a test or the bench, on a free random port, stopped by pid. */
export interface OwnRedis {
  port: number;
  url: string;
  pid: number;
  /** Stops the server (SIGTERM to its pid, then SIGKILL after 3 s). */
  stop(): Promise<void>;
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
  /** Port to listen on: a test restarting "the same" Redis passes the stopped one's. @default a free random port */
  port: number;
}

/**
 * Starts Debian's `redis-server` with no persistence on a random port, with
 * `slowlog-log-slower-than 5000` (µs) so a test can read `SLOWLOG GET`, and waits for PING.
 */
export async function startOwnRedis(opts: Partial<OwnRedisOptions> = {}): Promise<OwnRedis> {
  const port = opts.port ?? (await freePort());
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--slowlog-log-slower-than",
    "5000",
    ...(opts.args ?? []),
  ];
  const rt = opts.realtime === true && spawnSync("chrt", ["-f", "1", "true"]).status === 0;
  const [bin, argv]: [string, string[]] = rt ? ["chrt", ["-f", "1", "redis-server", ...args]] : ["redis-server", args];
  const url = `redis://127.0.0.1:${port}`;
  const ping = (alive: () => boolean, timeoutMs: number) => waitForRedisPing(url, { timeoutMs, alive });
  const { pid, stop } = await startOwnServer(bin, argv, ping, {
    install: "apt-get install redis-server",
    readyTimeoutMs: 10_000,
    killAfterMs: 3000,
  });
  return { port, url, pid, stop };
}
