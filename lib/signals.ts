/**
 * The signals a service may or may not export, and which figure needs which: what a page says
 * instead of a zero when one is missing ("not measured for this service: export …"). Isomorphic:
 * the server decides from Prometheus which a service exports, the pages word the answer.
 */
import { HOT_UUID_METRICS, METRIC_NAMES } from "@/names/dedup";
import { RUNTIME_SIGNAL_METRICS } from "@/names/runtime";

/**
 * The optional signals beside the design note's four metrics, each a figure of the dashboard and the
 * one metric whose series say the service exports it (hot UUIDs: the error bound, exported per
 * handler even before the first copy).
 */
export const OPTIONAL_SIGNALS = {
  byCause: METRIC_NAMES.duplicatesByCause,
  payloadConflicts: METRIC_NAMES.payloadConflicts,
  unchecked: METRIC_NAMES.unchecked,
  leaseLost: METRIC_NAMES.leaseLost,
  inProgress: METRIC_NAMES.inProgress,
  released: METRIC_NAMES.released,
  hotUuids: HOT_UUID_METRICS.errorBound,
  handlerTime: `${METRIC_NAMES.handlerExecutionTime}_count`,
  poisoned: METRIC_NAMES.poisoned,
} as const;

/** One optional signal. */
export type OptionalSignal = keyof typeof OPTIONAL_SIGNALS;

/** The design note's four metrics: every consumer that keeps the contract exports them (their series say it is scraped). */
export const CORE_METRICS = [
  METRIC_NAMES.processed,
  METRIC_NAMES.deduplicated,
  `${METRIC_NAMES.checkDuration}_count`,
  METRIC_NAMES.errors,
] as const;

/** "not measured for this service: export messages_duplicates_by_cause_total". */
export function notMeasuredText(metric: string): string {
  return `not measured for this service: export ${metric}`;
}

/** The runtime split's "not known" sentence, with every signal that would make it known. */
export const RUNTIME_UNKNOWN_TEXT = `not known for this runtime: export one of ${RUNTIME_SIGNAL_METRICS.join(", ")}`;

/** "no scrape since 14:02:11 UTC": the service's series went stale (its scrape failed, or its target is gone). */
export function noScrapeSinceText(lastScrapeAt: string): string {
  return `no scrape since ${lastScrapeAt.slice(11, 19)} UTC`;
}

/** Whether an unavailable figure's detail is {@link noScrapeSinceText}'s (the service, not the source, is missing). */
export function isNoScrapeDetail(detail: string): boolean {
  return detail.startsWith("no scrape ");
}
