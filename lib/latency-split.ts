/**
 * What the dedup check's p99 (timed in the consumer) is made of, and the verdict a tile and an
 * on-call may act on — never a cause without evidence. Two parts are measured: the consumer
 * runtime's own stall (Node's event-loop delay, a JVM's GC pause, Go's scheduler latency:
 * names/runtime) and Redis' own time per call of the dedup's commands (INFO commandstats). A part
 * "explains" the p99 when it is at least half of it; Redis' per-call time under a tenth of it means
 * "not Redis' own time". What neither explains is said to be unexplained, with where to look:
 * queueing in Redis behind other commands (a slow script, a big KEYS) shows in neither figure, only
 * in SLOWLOG. Isomorphic.
 */
import { RUNTIME_UNKNOWN_TEXT } from "./signals";
import { formatSecondsAsMs } from "./format";

/** The runtime part: its value (seconds) and which signal it came from, or not known for this runtime. */
export type RuntimePart =
  | { status: "ok"; runtime: string; metric: string; meaning: string; seconds: number | null }
  | { status: "unknown"; metrics: string[]; detail: string };

/** The verdict: which part explains the p99; `not_redis` when Redis is ruled out and the runtime is not known; null without a p99. */
export type LatencyVerdict = "consumer" | "redis" | "not_redis" | "unexplained" | null;

/** A part explains the p99 when it is at least this share of it. */
export const EXPLAINS_SHARE = 0.5;
/** Redis' own per-call time below this share of the p99 rules Redis' execution out. */
export const FAR_BELOW_SHARE = 0.1;

/** The sentence for a p99 neither part explains. */
export const UNEXPLAINED_TEXT = "unexplained — queueing in Redis behind other commands? (SLOWLOG)";

/** µs as the tile writes them: "8 µs/call", "1.2 ms/call". */
function perCall(usec: number): string {
  return usec >= 1000 ? `${formatSecondsAsMs(usec / 1e6)}/call` : `${Math.round(usec)} µs/call`;
}

/**
 * The verdict and its sentence from the check p99 (seconds), the runtime part and Redis' slowest
 * per-call time of the dedup's commands (µs; null without Redis or before it was sampled); `high`
 * (the p99 above its alert threshold) words a cause as the incident ("the consumer is saturated",
 * "Redis is slow") rather than as the larger part ("mostly …").
 */
export function latencyVerdict(
  p99Seconds: number | null,
  runtime: RuntimePart,
  redisUsecPerCall: number | null,
  high = false,
): { verdict: LatencyVerdict; text: string } {
  const parts: string[] = [];
  const rt = runtime.status === "ok" ? runtime.seconds : null;
  if (runtime.status === "ok") parts.push(`${runtime.meaning} ${rt === null ? "—" : formatSecondsAsMs(rt)}`);
  if (redisUsecPerCall !== null) parts.push(`Redis ${perCall(redisUsecPerCall)}`);
  if (p99Seconds === null || p99Seconds <= 0)
    return {
      verdict: null,
      text: [...parts, runtime.status === "unknown" ? runtime.detail : null].filter(Boolean).join(" · "),
    };
  const redis = redisUsecPerCall === null ? null : redisUsecPerCall / 1e6;
  const runtimeExplains = rt !== null && rt >= EXPLAINS_SHARE * p99Seconds;
  const redisExplains = redis !== null && redis >= EXPLAINS_SHARE * p99Seconds;
  const redisRuledOut = redis !== null && redis < FAR_BELOW_SHARE * p99Seconds;
  let verdict: LatencyVerdict;
  let why: string;
  if (runtimeExplains && (!redisExplains || rt! >= redis!)) {
    verdict = "consumer";
    why = `${high ? "the consumer is saturated" : "mostly the consumer"}${redisRuledOut ? " (not Redis)" : ""}`;
  } else if (redisExplains) {
    verdict = "redis";
    why = high ? "Redis is slow" : "mostly Redis";
  } else if (runtime.status === "unknown") {
    verdict = redisRuledOut ? "not_redis" : null;
    why = redisRuledOut ? `not Redis' own time; the consumer's side is ${runtime.detail}` : runtime.detail;
  } else {
    verdict = "unexplained";
    why = redis === null ? "unexplained by the runtime (Redis' own time not sampled)" : UNEXPLAINED_TEXT;
  }
  return { verdict, text: [...parts, why].join(" · ") };
}

/** The runtime part of a service that exports none of the runtime signals. */
export function runtimeUnknown(metrics: readonly string[]): RuntimePart {
  return { status: "unknown", metrics: [...metrics], detail: RUNTIME_UNKNOWN_TEXT };
}
