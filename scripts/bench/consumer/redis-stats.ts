/** What the Redis server spent, read from `INFO`, for `bench:consumer`. */
import type { Redis } from "ioredis";
import { parseCommandStats } from "@/server/observe/watchers/redis-command-time";

/** The Redis server process' CPU seconds (user + system) so far (`INFO cpu`). */
export async function redisServerCpu(r: Redis): Promise<number> {
  const i = await r.info("cpu");
  const num = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, "m").exec(i)?.[1] ?? 0);
  return num("used_cpu_user") + num("used_cpu_sys");
}

/** Redis server time so far: script and SET µs and calls from `INFO commandstats`, and the server process' CPU seconds. */
export async function redisCpu(r: Redis): Promise<{ scriptUsec: number; scriptCalls: number; cpuSec: number }> {
  const stats = parseCommandStats(await r.info("commandstats"));
  let scriptUsec = 0;
  let scriptCalls = 0;
  for (const command of ["evalsha", "eval", "set"]) {
    scriptCalls += stats.get(command)?.calls ?? 0;
    scriptUsec += stats.get(command)?.usec ?? 0;
  }
  return { scriptUsec, scriptCalls, cpuSec: await redisServerCpu(r) };
}
