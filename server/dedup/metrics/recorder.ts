/**
 * The Deduplicator's recorder: the hot path's handle on its metrics (./metrics.ts), one per service,
 * with its label cells cached; a no-op without a Registry.
 */
import type { Registry } from "prom-client";
import { checkTimesCell, type CheckTimes } from "./check-times";
import { handlerCells, type HandlerCells } from "./counter-cells";
import { LocalHistogram } from "./local-histogram";
import { dedupMetrics } from "./metrics";
import {
  DEDUP_ERROR_REASONS,
  PROCESSED_RESULT,
  SLOW_CHECK_SECONDS,
  type DedupErrorReason,
  type DuplicateCause,
  type PayloadDifference,
  type ProcessedResult,
} from "../../../names/dedup";

/** What the Deduplicator records; a no-op implementation when no Registry is given. */
export interface DedupRecorder {
  /** Creates the handler's zero series (see "Zero series" in ./metrics.ts); idempotent. */
  register(topic: string, handler: string): void;
  result(topic: string, handler: string, result: ProcessedResult): void;
  /** One swallowed duplicate by cause (call with `result(…, "deduplicated")`). */
  duplicate(topic: string, handler: string, cause: DuplicateCause): void;
  /**
   * A check of `handler`'s keys (one claim round trip; a batch pre-claim is one) that ended at
   * `endMs` (`performance.now()`): its latency sample in `seconds`, or null when it is none.
   * `startMs`, for a completed check, is when it was sent: the moment it shows the store answering
   * (`last_check`). A reply that arrived before a later failure but was read after it, on a busy
   * event loop, is then no check after that failure.
   */
  check(handler: string, endMs: number, seconds: number | null, startMs?: number): void;
  /** A failed store call or key-factory failure on `handler`'s messages. */
  error(reason: DedupErrorReason, handler: string): void;
  inProgress(topic: string, handler: string): void;
  released(topic: string, handler: string): void;
  leaseLost(topic: string, handler: string): void;
  /** A copy whose UUID is done with another payload (labels service, handler, difference: what was compared). */
  payloadConflict(handler: string, difference: PayloadDifference): void;
  /** A fingerprint of chosen fields taken over the bytes: the payload is not JSON. */
  fingerprintFallback(handler: string): void;
  /** A handler run let through without a check (fail-open), by the failure's reason. */
  unchecked(handler: string, reason: DedupErrorReason): void;
}

const noop = () => undefined;

/** The recorder without a Registry: records nothing. */
const NOOP_RECORDER: DedupRecorder = {
  register: noop,
  result: noop,
  duplicate: noop,
  check: noop,
  error: noop,
  inProgress: noop,
  released: noop,
  leaseLost: noop,
  payloadConflict: noop,
  fingerprintFallback: noop,
  unchecked: noop,
};

/**
 * A recorder bound to one service label, with its label cells cached (hot path: no label hashing).
 * `fingerprintFields`: the handlers it records chose fingerprint fields (their fallback count exists at 0).
 */
export function dedupRecorder(
  registry: Registry | undefined,
  service: string,
  fingerprintFields = false,
): DedupRecorder {
  if (!registry) return NOOP_RECORDER;
  const m = dedupMetrics(registry);
  // The first store error of each kind must be an increase from 0, not a series born at 1.
  for (const reason of DEDUP_ERROR_REASONS) m.errors.inc({ service, reason }, 0);
  // topic → handler → the handler's cells (made at its registration, or first event); the last one
  // used is kept, since a Deduplicator serves one handler as a rule: no lookup, no string building.
  const cells = new Map<string, Map<string, HandlerCells>>();
  let lastCells: HandlerCells | undefined;
  const cellsOf = (topic: string, handler: string): HandlerCells => {
    if (lastCells !== undefined && lastCells.handler === handler && lastCells.topic === topic) return lastCells;
    let byHandler = cells.get(topic);
    if (!byHandler) cells.set(topic, (byHandler = new Map()));
    let hc = byHandler.get(handler);
    if (!hc) byHandler.set(handler, (hc = handlerCells(m, service, topic, handler)));
    return (lastCells = hc);
  };
  const observe =
    m.checkDuration instanceof LocalHistogram
      ? m.checkDuration.observer({ service })
      : (s: number) => m.checkDuration.observe({ service }, s);
  const times = new Map<string, CheckTimes>();
  let last: CheckTimes | undefined; // a Deduplicator serves one handler, as a rule: no lookup then
  const timesOf = (handler: string) => {
    if (last?.labels.handler !== handler)
      last = times.get(handler) ?? times.set(handler, checkTimesCell(m, service, handler)).get(handler)!;
    return last;
  };
  return {
    register(topic, handler) {
      cellsOf(topic, handler);
      // Only a handler that chose fingerprint fields can fall back to the bytes: only its series exists at 0.
      if (fingerprintFields) m.fingerprintFallbacks.inc({ service, handler }, 0);
    },
    result(topic, handler, result) {
      const c = cellsOf(topic, handler);
      c.processed[result].inc();
      if (result === PROCESSED_RESULT.deduplicated) c.deduplicated.inc();
    },
    duplicate: (topic, handler, cause) => cellsOf(topic, handler).cause[cause].inc(),
    check(handler, endMs, seconds, startMs) {
      const c = timesOf(handler);
      const at = startMs ?? endMs;
      // Never backwards: checks in flight together complete in any order (NaN: none yet).
      if (!(c.check >= at)) c.check = at;
      if (seconds === null) return;
      observe(seconds);
      if (seconds > SLOW_CHECK_SECONDS) c.slow = endMs;
    },
    error(reason, handler) {
      m.errors.labels({ service, reason }).inc();
      timesOf(handler).error = performance.now();
    },
    inProgress: (topic, handler) => cellsOf(topic, handler).inProgress.inc(),
    released: (topic, handler) => cellsOf(topic, handler).released.inc(),
    leaseLost: (topic, handler) => cellsOf(topic, handler).leaseLost.inc(),
    // Rare (a publisher bug): no cached cell needed.
    payloadConflict: (handler, difference) => m.payloadConflicts.inc({ service, handler, difference }),
    // Only for payloads that are not JSON under chosen fields: no cached cell needed.
    fingerprintFallback: (handler) => m.fingerprintFallbacks.inc({ service, handler }),
    // Only while the store fails (or for a keyless record): no cached cell needed.
    unchecked: (handler, reason) => m.unchecked.inc({ service, handler, reason }),
  };
}
