/**
 * The Deduplicator's counters and last-time gauges, with the help text each series carries: what
 * `dedupMetrics` creates on a Registry (when each moves: ./metrics.ts).
 */
import type { Counter, Gauge } from "prom-client";
import type { CheckTimeGauges } from "./check-times";
import { METRIC_LABELS, METRIC_NAMES, SLOW_CHECK_SECONDS, type LabelsOf } from "../../../names/dedup";

/** Gets or creates a counter on one Registry. */
export type MakeCounter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => Counter<L>;

/** Gets or creates a last-time gauge (`{service,handler}`, Unix seconds) on one Registry. */
export type MakeGauge = (name: string, help: string) => Gauge<"service" | "handler">;

/** Spec §7's per-delivery results: `messages_deduplicated_total`, `messages_processed_total`. */
export interface ResultCounters {
  deduplicated: Counter<LabelsOf<"deduplicated">>;
  processed: Counter<LabelsOf<"processed">>;
}

/** The per-event counters: store failures, leases, the DLQ, payload conflicts, unchecked runs, causes. */
export interface EventCounters {
  errors: Counter<LabelsOf<"errors">>;
  inProgress: Counter<LabelsOf<"inProgress">>;
  released: Counter<LabelsOf<"released">>;
  leaseLost: Counter<LabelsOf<"leaseLost">>;
  poisoned: Counter<LabelsOf<"poisoned">>;
  payloadConflicts: Counter<LabelsOf<"payloadConflicts">>;
  fingerprintFallbacks: Counter<LabelsOf<"fingerprintFallbacks">>;
  unchecked: Counter<LabelsOf<"unchecked">>;
  duplicatesByCause: Counter<LabelsOf<"duplicatesByCause">>;
}

/** The per-delivery result counters, made by `counter`. */
export function resultCounters(counter: MakeCounter): ResultCounters {
  return {
    deduplicated: counter(
      METRIC_NAMES.deduplicated,
      "Deliveries swallowed by the Deduplicator as repeats (once per delivery).",
      METRIC_LABELS.deduplicated,
    ),
    processed: counter(
      METRIC_NAMES.processed,
      "Deliveries that reached the Deduplicator, by final result (once per delivery, not per retry attempt).",
      METRIC_LABELS.processed,
    ),
  };
}

/** The per-event counters, made by `counter` (in this order). */
export function eventCounters(counter: MakeCounter): EventCounters {
  return {
    errors: counter(
      METRIC_NAMES.errors,
      "Failed dedup store calls and key-factory failures, by reason (redis_timeout, redis_conn, marshal).",
      METRIC_LABELS.errors,
    ),
    inProgress: counter(
      METRIC_NAMES.inProgress,
      "Attempts that met a key leased by another consumer (InProgressError, retried).",
      METRIC_LABELS.inProgress,
    ),
    released: counter(
      METRIC_NAMES.released,
      "Dedup keys released after a failed attempt so that the retry runs the handler again.",
      METRIC_LABELS.released,
    ),
    leaseLost: counter(
      METRIC_NAMES.leaseLost,
      "Successful runs whose lease had been taken over by another consumer (possible double run).",
      METRIC_LABELS.leaseLost,
    ),
    poisoned: counter(
      METRIC_NAMES.poisoned,
      "Messages the PoisonQueue published to the DLQ, by error class (reason_poisoned: one of a bounded set such as marshal, redis_timeout, non_retryable, handler_error; never the error's message).",
      METRIC_LABELS.poisoned,
    ),
    payloadConflicts: counter(
      METRIC_NAMES.payloadConflicts,
      "Copies whose message UUID was already processed with another payload (a publisher reusing UUIDs), per handler; poisoned to the DLQ or swallowed per onPayloadConflict. difference: fields (the handler's chosen fingerprint fields differ) or bytes (the payload bytes differ: no fields chosen, or a payload that is not JSON).",
      METRIC_LABELS.payloadConflicts,
    ),
    fingerprintFallbacks: counter(
      METRIC_NAMES.fingerprintFallbacks,
      "Payload fingerprints of a handler with chosen fields (its fingerprint option) taken over the payload's bytes because it is not UTF-8 JSON: each done mark and each compared copy.",
      METRIC_LABELS.fingerprintFallbacks,
    ),
    unchecked: counter(
      METRIC_NAMES.unchecked,
      "Handler runs that fail-open let through without a dedup check, by the store failure that skipped it (redis_timeout, redis_conn, marshal); once per attempt.",
      METRIC_LABELS.unchecked,
    ),
    duplicatesByCause: counter(
      METRIC_NAMES.duplicatesByCause,
      "Swallowed duplicates by cause: redelivery (same topic:partition:offset as the first delivery), republish (another position), unknown (no position stored).",
      METRIC_LABELS.duplicatesByCause,
    ),
  };
}

/** The last check / error / slow check gauges, made by `gauge`. */
export function lastTimeGauges(gauge: MakeGauge): CheckTimeGauges {
  return {
    lastCheck: gauge(
      METRIC_NAMES.lastCheck,
      "Unix time of the handler's latest dedup check: the start of a completed claim round trip, the end of a failed one (a batch is one).",
    ),
    lastError: gauge(
      METRIC_NAMES.lastError,
      "Unix time of the handler's last failed store call or key-factory failure (each deduplication_errors_total increment).",
    ),
    lastSlowCheck: gauge(
      METRIC_NAMES.lastSlowCheck,
      `Unix time of the handler's last check slower than ${SLOW_CHECK_SECONDS} s (the latency alert's threshold).`,
    ),
  };
}
