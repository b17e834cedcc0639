/**
 * The overview row's parts that depend on what the service exports (./signals): the latency split
 * from its runtime signal, the optional signals its figures need, and every figure replaced by
 * "no scrape since …" while its scrape is down.
 */
import type { OverviewHandler } from "@/lib/api/overview";
import { latencyVerdict, runtimeUnknown, type RuntimePart } from "@/lib/latency-split";
import { THRESHOLDS } from "@/lib/thresholds";
import { RUNTIME_SIGNAL_METRICS, RUNTIME_SIGNALS } from "@/names/runtime";
import type { Sample } from "../metrics/source";
import { measured, scrapeState, type Signals } from "./signals";
import { unavailable } from "./upstream";

/** The runtime signal order: the first one the service exports is the one the split reads. */
const PREFERRED = Object.values(RUNTIME_SIGNALS);

/** The service's runtime part from the `runtime_latency` samples (null when they could not be read: nothing is claimed). */
export function runtimePartOf(samples: readonly Sample[] | null, service: string): RuntimePart | null {
  if (samples === null) return null;
  const mine = samples.filter((s) => s.labels.service === service);
  for (const sig of PREFERRED) {
    const s = mine.find((x) => x.labels.metric === sig.metric);
    if (s) return { status: "ok", runtime: sig.runtime, metric: sig.metric, meaning: sig.meaning, seconds: s.value };
  }
  return runtimeUnknown(RUNTIME_SIGNAL_METRICS);
}

/** Redis' slowest per-call time (µs) of the dedup's commands, null without a sample. */
function redisUsec(redis: readonly Sample[] | null): number | null {
  return redis && redis.length ? Math.max(...redis.map((s) => s.value ?? 0)) : null;
}

/** The row's latency split; undefined when the runtime signals could not be read at all. */
export function latencyPartsOf(
  runtime: RuntimePart | null,
  redis: readonly Sample[] | null,
  p99Seconds: number | null,
): OverviewHandler["latencyParts"] {
  if (runtime === null) return undefined;
  const usec = redisUsec(redis);
  const high = p99Seconds !== null && p99Seconds > THRESHOLDS.checkP99Seconds;
  return { runtime, redisUsecPerCall: usec, ...latencyVerdict(p99Seconds, runtime, usec, high) };
}

/** The optional signals of one service's figures. */
export function rowSignals(sig: Signals, service: string): NonNullable<OverviewHandler["signals"]> {
  return {
    byCause: measured(sig, service, "byCause"),
    payloadConflicts: measured(sig, service, "payloadConflicts"),
    leases: measured(sig, service, "leaseLost"),
    hotUuids: measured(sig, service, "hotUuids"),
  };
}

/**
 * The row as it reads while its service is not scraped: every figure the service's series make says
 * "no scrape since …" (a 5-min rate keeps its last value for minutes after the last sample).
 */
export function withScrape(row: OverviewHandler, sig: Signals): OverviewHandler {
  const scrape = scrapeState(sig, row.service);
  if (scrape.status === "live") return { ...row, scrape };
  const down = unavailable(scrape.detail);
  return {
    ...row,
    scrape,
    duplicateRatio: down,
    processedRate: down,
    checkLatency: down,
    errorRates: down,
    now: down,
    unchecked: down,
    latencyParts: undefined,
  };
}
