import type { AlertRule } from "@/lib/api/alerts";
import type { MetricsSource as MetricsSourceKind } from "@/lib/api/common";
import type { QueryName } from "@/lib/named-queries";

/** One value of an instant query; `value` is `null` for NaN (0/0: no traffic). */
export interface Sample {
  labels: Record<string, string>;
  value: number | null;
}

/** One series of a range query: `[unixSeconds, value|null]` points. */
export interface RangeSeries {
  labels: Record<string, string>;
  points: Array<[number, number | null]>;
}

/**
 * Where metric values come from: Prometheus (HTTP API) or the app's own registry sampled in
 * process (embedded mode). Both answer the same named queries with the same labels.
 */
export interface MetricsSource {
  readonly kind: MetricsSourceKind;
  /**
   * Current values of a named query; with `atSec` (Unix seconds), its values at that instant, so
   * that several queries read one moment of the store (a page's "now" against its window, the
   * evidence that a fault is over against the rate it is judged by).
   */
  instant(q: QueryName, atSec?: number): Promise<Sample[]>;
  /** Values from `startSec` to `endSec` every `stepSec`. */
  range(q: QueryName, startSec: number, endSec: number, stepSec: number): Promise<RangeSeries[]>;
  /** Every alert of lib/thresholds with its instances. */
  alerts(): Promise<AlertRule[]>;
  /**
   * Optional: what the last successful {@link alerts} read said and since when reads fail — for a
   * badge that says "unknown (… unavailable since …)" with the last known state instead of
   * "inactive". Absent on a source that cannot fail (the embedded evaluator).
   */
  alertsMemory?(): AlertsMemory;
}

/** The last known alert states and since when they could not be read. */
export interface AlertsMemory {
  /** ISO time of the first failed read after the last success; null while reads succeed. */
  unavailableSince: string | null;
  /** The last successful read and its time; null before the first. */
  lastKnown: { at: string; rules: AlertRule[] } | null;
}
