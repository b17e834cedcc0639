/** What the Redis server spent, read from `INFO`, and the clean-up of a run's keys, for `bench:consumer`. */
import type { Redis } from "ioredis";

/** The Redis server process' CPU seconds (user + system) so far (`INFO cpu`). */
export async function redisServerCpu(r: Redis): Promise<number> {
  const i = await r.info("cpu");
  const num = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, "m").exec(i)?.[1] ?? 0);
  return num("used_cpu_user") + num("used_cpu_sys");
}

/** Redis server time so far: script and SET µs and calls from `INFO commandstats`, and the server process' CPU seconds. */
export async function redisCpu(r: Redis): Promise<{ scriptUsec: number; scriptCalls: number; cpuSec: number }> {
  const stats = await r.info("commandstats");
  let scriptUsec = 0;
  let scriptCalls = 0;
  for (const m of stats.matchAll(/^cmdstat_(evalsha|eval|set):calls=(\d+),usec=(\d+)/gm)) {
    scriptCalls += Number(m[2]);
    scriptUsec += Number(m[3]);
  }
  return { scriptUsec, scriptCalls, cpuSec: await redisServerCpu(r) };
}

/** Deletes every key under `prefix` (SCAN + UNLINK); answers how many there were. */
export async function unlinkPrefix(client: Redis, prefix: string): Promise<number> {
  let cursor = "0";
  let n = 0;
  do {
    const [next, keys] = (await client.call("SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", 5000)) as [string, string[]];
    cursor = next;
    if (keys.length) n += Number(await client.call("UNLINK", ...keys));
  } while (cursor !== "0");
  return n;
}
