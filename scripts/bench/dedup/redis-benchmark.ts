/** The reference: `redis-benchmark -t set` against the same Redis, SET/s at a given pipeline depth. */
import { spawnSync } from "node:child_process";
import { url } from "./settings";

/** The one key `redis-benchmark -t set` writes; deleted after the reference unless it was there before. */
const REDIS_BENCHMARK_KEY = "key:__rand_int__";

/** SET/s of `redis-benchmark -P <pipeline> -n <n>`; removes the key it wrote unless it was there before. */
export function redisBenchmark(pipeline: number, n: number): number {
  const cli = (...args: string[]) =>
    spawnSync("redis-cli", ["-h", url.hostname, "-p", url.port || "6379", ...args], {
      encoding: "utf8",
      timeout: 10_000,
    });
  const existed = cli("EXISTS", REDIS_BENCHMARK_KEY).stdout?.trim() === "1";
  try {
    return redisBenchmarkRate(pipeline, n);
  } finally {
    if (!existed) cli("DEL", REDIS_BENCHMARK_KEY);
  }
}

/** Runs redis-benchmark and parses its last SET rate. */
function redisBenchmarkRate(pipeline: number, n: number): number {
  const res = spawnSync(
    "redis-benchmark",
    ["-h", url.hostname, "-p", url.port || "6379", "-t", "set", "-P", String(pipeline), "-n", String(n), "-q"],
    {
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  if (res.error)
    throw new Error(`redis-benchmark failed: ${res.error.message} (install it: apt-get install -y redis-tools)`);
  const matches = [...`${res.stdout}`.matchAll(/SET: ([\d.]+) requests per second/g)];
  const last = matches.at(-1);
  if (!last) throw new Error(`could not parse redis-benchmark output: ${res.stdout.slice(-300)} ${res.stderr}`);
  return Number(last[1]);
}
