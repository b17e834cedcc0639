/**
 * The hot path's counter increments (./metrics): a cell per label set whose pending count the
 * counter's `collect` flushes at scrape time, and the cells of one topic and handler in one record.
 */
import type { Counter } from "prom-client";
import {
  DEDUP_ERROR_REASONS,
  DUPLICATE_CAUSES,
  PAYLOAD_DIFFERENCES,
  PROCESSED_RESULTS,
  type DuplicateCause,
  type ProcessedResult,
} from "../../../names/dedup";

/**
 * Pending increments kept ON the prom-client counter object (shared by every copy of this module
 * that get-or-creates it), flushed by the counter's `collect` at scrape time. An increment on the
 * hot path is then `cell.n++` instead of prom-client's ~1 µs label hashing per `inc()`.
 */
const PENDING = Symbol.for("dedup-health.pendingCounts");

interface CounterCell {
  labels: Record<string, string>;
  n: number;
}

type WithPending = { [PENDING]?: Map<string, CounterCell> };

/** The counters' `collect` (set by `dedupMetrics`): adds the pending increments to the counter. */
export function flushPending(this: Counter<string>): void {
  const cells = (this as unknown as WithPending)[PENDING];
  if (!cells) return;
  for (const cell of cells.values()) {
    if (cell.n > 0) {
      const n = cell.n;
      cell.n = 0;
      this.inc(cell.labels, n);
    }
  }
}

/** One label set's increment on the hot path. */
interface CounterInc {
  inc(): void;
}

/** The cells of one topic and handler (see `dedupRecorder`). */
export interface HandlerCells {
  readonly topic: string;
  readonly handler: string;
  readonly processed: Readonly<Record<ProcessedResult, CounterInc>>;
  readonly deduplicated: CounterInc;
  readonly cause: Readonly<Record<DuplicateCause, CounterInc>>;
  readonly inProgress: CounterInc;
  readonly released: CounterInc;
  readonly leaseLost: CounterInc;
}

/** A cell of pending increments for one label set; falls back to a direct inc if the counter has no flushing collect. */
function counterCell(counter: Counter<string>, labels: Record<string, string>): CounterInc {
  const holder = counter as unknown as WithPending & { collect?: unknown };
  if (holder.collect !== flushPending) {
    const child = counter.labels(labels);
    return { inc: () => child.inc() };
  }
  holder[PENDING] ??= new Map();
  const k = JSON.stringify(labels);
  let cell = holder[PENDING].get(k);
  if (!cell) {
    cell = { labels, n: 0 };
    holder[PENDING].set(k, cell);
  }
  const c = cell;
  return { inc: () => void c.n++ };
}

/** The counters of the Deduplicator's metrics (./metrics `DedupMetrics`) with per-handler series. */
export type HandlerCounters = Record<
  | "deduplicated"
  | "inProgress"
  | "released"
  | "leaseLost"
  | "payloadConflicts"
  | "unchecked"
  | "processed"
  | "duplicatesByCause",
  Counter<string>
>;

/**
 * The cells of `topic` and `handler`, made with the handler's zero series (./metrics, "Zero
 * series"): its series exist from its registration (or, without a Router, its first delivery), not
 * from their first event — an absent series reads as "no data", one born at N > 0 as rate 0.
 */
export function handlerCells(m: HandlerCounters, service: string, topic: string, handler: string): HandlerCells {
  const labels = { service, topic, handler };
  m.deduplicated.inc(labels, 0);
  m.inProgress.inc(labels, 0);
  m.released.inc(labels, 0);
  m.leaseLost.inc(labels, 0);
  for (const difference of PAYLOAD_DIFFERENCES) m.payloadConflicts.inc({ service, handler, difference }, 0);
  for (const reason of DEDUP_ERROR_REASONS) m.unchecked.inc({ service, handler, reason }, 0);
  for (const result of PROCESSED_RESULTS) m.processed.inc({ ...labels, result }, 0);
  for (const cause of DUPLICATE_CAUSES) m.duplicatesByCause.inc({ ...labels, cause }, 0);
  const each = <V extends string>(values: readonly V[], counter: Counter<string>, label: string) =>
    Object.fromEntries(values.map((v) => [v, counterCell(counter, { ...labels, [label]: v })])) as Record<
      V,
      CounterInc
    >;
  return {
    topic,
    handler,
    processed: each(PROCESSED_RESULTS, m.processed, "result"),
    deduplicated: counterCell(m.deduplicated, labels),
    cause: each(DUPLICATE_CAUSES, m.duplicatesByCause, "cause"),
    inProgress: counterCell(m.inProgress, labels),
    released: counterCell(m.released, labels),
    leaseLost: counterCell(m.leaseLost, labels),
  };
}
