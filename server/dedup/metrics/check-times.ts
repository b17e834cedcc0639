/**
 * The per-handler moments behind `deduplication_last_{check,error,slow_check}_timestamp_seconds`
 * (./metrics, where when each moves is defined): the hot path stores a `performance.now()` in a
 * plain cell; the gauges' `collect` turns it into Unix seconds at scrape time.
 */
import { Gauge } from "prom-client";

/** The three gauges of the moments, on one Registry. */
export interface CheckTimeGauges {
  lastCheck: Gauge<"service" | "handler">;
  lastError: Gauge<"service" | "handler">;
  lastSlowCheck: Gauge<"service" | "handler">;
}

/**
 * Kept ON the three gauges (shared by every copy of this module that get-or-creates them): each
 * gauge's field and the cells of every handler.
 */
const CHECK_TIMES = Symbol.for("dedup-health.checkTimes");

/** The moments of one handler's last check, error and slow check, as `performance.now()` ms (NaN: none yet). */
export interface CheckTimes {
  labels: { service: string; handler: string };
  check: number;
  error: number;
  slow: number;
}

type TimeField = "check" | "error" | "slow";
type WithTimes = { [CHECK_TIMES]?: { field: TimeField; cells: Map<string, CheckTimes> } };

/** The monotonic clock's origin in wall-clock ms, taken again each second (one per scrape, so the three gauges agree). */
let wall = { origin: 0, at: -Infinity };

/** A moments gauge's `collect`: every handler's moment of the gauge's field, in Unix seconds. */
export function collectTimes(this: Gauge<string>): void {
  const held = (this as unknown as WithTimes)[CHECK_TIMES];
  if (!held) return;
  // Taken near the moments it converts: exact for recent ones, whatever the clocks' drift since start.
  const p = performance.now();
  // Taken again after a second, or when the monotonic clock reads less than before (a test that fakes it).
  if (p - wall.at > 1000 || p < wall.at) wall = { origin: Date.now() - p, at: p };
  const origin = wall.origin;
  for (const c of held.cells.values()) {
    const ms = c[held.field];
    if (!Number.isNaN(ms)) this.set(c.labels, (origin + ms) / 1000);
  }
}

/** The cell of `service`/`handler`'s moments, shared by the three gauges (one cell per handler, whichever recorder asks). */
export function checkTimesCell(g: CheckTimeGauges, service: string, handler: string): CheckTimes {
  const k = `${service}\u0000${handler}`;
  const held = (gauge: Gauge<string>, field: TimeField) =>
    ((gauge as unknown as WithTimes)[CHECK_TIMES] ??= { field, cells: new Map() });
  const cell = held(g.lastCheck, "check").cells.get(k) ?? {
    labels: { service, handler },
    check: NaN,
    error: NaN,
    slow: NaN,
  };
  for (const [gauge, field] of [
    [g.lastCheck, "check"],
    [g.lastError, "error"],
    [g.lastSlowCheck, "slow"],
  ] as const)
    held(gauge, field).cells.set(k, cell);
  return cell;
}
