/**
 * Redis' own time for the commands the Deduplicator sends, from `INFO commandstats` sampled every
 * ~15 s: the microseconds per call of `set`, `eval`, `evalsha` and `del` over the last interval
 * (the difference of two samples, so it says "now", not "since Redis started"). Exported as the
 * gauge {@link REDIS_COMMAND_TIME_METRIC} on the app's registry, so the dashboard can put Redis'
 * time next to the check p99 measured in the consumer and tell a slow Redis from a saturated consumer.
 */
import { Gauge, type Registry } from "prom-client";
import { Cluster } from "ioredis";
import { countUpstream } from "../core/upstream-counter";
import type { RedisLike } from "../redis/client";
import { exportsFleetGauges } from "@/server/replicas/leader";
import { REDIS_COMMAND_TIME_METRIC } from "@/names/observe";

/** The commands the Deduplicator sends (claims, scripts, releases). */
export const DEDUP_COMMANDS = ["set", "eval", "evalsha", "del"] as const;

/** `calls` and `usec` per command from an `INFO commandstats` reply. */
export function parseCommandStats(info: string): Map<string, { calls: number; usec: number }> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const line of info.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):(.*)$/.exec(line.trim());
    if (!m) continue;
    const f = Object.fromEntries(m[2]!.split(",").map((kv) => kv.split("=") as [string, string]));
    const calls = Number(f.calls);
    const usec = Number(f.usec);
    if (Number.isFinite(calls) && Number.isFinite(usec)) out.set(m[1]!.toLowerCase(), { calls, usec });
  }
  return out;
}

/** µs per call between two samples of one node; undefined where no call happened in between. */
export function usecPerCall(
  prev: ReadonlyMap<string, { calls: number; usec: number }>,
  cur: ReadonlyMap<string, { calls: number; usec: number }>,
  command: string,
): number | undefined {
  const a = prev.get(command);
  const b = cur.get(command);
  if (!b) return undefined;
  // A restarted Redis (counters smaller than before) counts from zero.
  const base = a && b.calls >= a.calls ? a : { calls: 0, usec: 0 };
  const calls = b.calls - base.calls;
  return calls > 0 ? (b.usec - base.usec) / calls : undefined;
}

/**
 * Samples `INFO commandstats` of every master every `intervalMs` into the gauge (get-or-create on
 * `registry`); a failed sample leaves the last values. Returns a stop function. Timer unref'd.
 */
export function startRedisCommandTime(redis: RedisLike, registry: Registry, intervalMs = 15_000): () => void {
  const gauge =
    (registry.getSingleMetric(REDIS_COMMAND_TIME_METRIC) as Gauge<"command"> | undefined) ??
    new Gauge({
      name: REDIS_COMMAND_TIME_METRIC,
      help: "Microseconds Redis spent per call of the dedup's commands over the last ~15 s (INFO commandstats, max over masters)",
      labelNames: ["command"],
      registers: [registry],
    });
  const prev = new Map<string, Map<string, { calls: number; usec: number }>>();
  const sample = async () => {
    // A follower replica exports nothing (the fleet's leader does); its next lead starts from a fresh sample.
    if (!exportsFleetGauges()) {
      gauge.reset();
      prev.clear();
      return;
    }
    const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
    const worst = new Map<string, number>();
    await Promise.all(
      nodes.map(async (n) => {
        const id = `${n.options.host}:${n.options.port}`;
        const cur = parseCommandStats(await countUpstream("redis", () => n.info("commandstats")));
        const p = prev.get(id);
        prev.set(id, cur);
        if (!p) return;
        for (const c of DEDUP_COMMANDS) {
          const v = usecPerCall(p, cur, c);
          if (v !== undefined) worst.set(c, Math.max(worst.get(c) ?? 0, v));
        }
      }),
    );
    // No call in the interval: no figure, rather than the last one going stale.
    for (const c of DEDUP_COMMANDS) {
      const v = worst.get(c);
      if (v === undefined) gauge.remove({ command: c });
      else gauge.set({ command: c }, v);
    }
  };
  const t = setInterval(() => void sample().catch(() => undefined), intervalMs);
  t.unref();
  void sample().catch(() => undefined);
  return () => clearInterval(t);
}
