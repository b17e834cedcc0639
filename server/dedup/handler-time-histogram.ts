/**
 * The histogram behind `handler_execution_time_seconds{service,handler,success}`: prom-client's
 * exposition, with a hot path of one bucket search and three additions per observation (no label
 * hashing, like `LocalHistogram` of `./check-duration-histogram`). Registered get-or-create by `dedupMetrics`.
 */
import { HANDLER_SUCCESS, METRIC_LABELS, type HandlerSuccess } from "../../names/dedup";

/**
 * Buckets of `handler_execution_time_seconds`, in seconds: fine below a second (most handlers),
 * then up to and past the default lease (`leaseMs` 60 s): 15 and 30 s bracket half the lease
 * (where the lint warns that a takeover is near), 60 s is the lease itself, 120 and 300 s say by
 * how much a handler outlived it.
 */
export const HANDLER_TIME_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300];

interface Cell {
  labels: { service: string; handler: string; success: HandlerSuccess };
  counts: number[];
  sum: number;
  count: number;
}

/** Records one attempt's duration in seconds. */
export type Observe = (seconds: number) => void;

/** `handler_execution_time_seconds` on one Registry (see the module doc). */
export class HandlerTimeHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly labelNames: readonly string[] = METRIC_LABELS.handlerExecutionTime;
  private readonly cells = new Map<string, Cell>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = HANDLER_TIME_BUCKETS,
  ) {}

  /**
   * The observers of one handler, `[success, failure]`; creates both series at 0 on first call (so
   * the first slow or failed attempt is an increase from 0, not a series born at 1).
   */
  handler(service: string, handler: string): readonly [Observe, Observe] {
    return [this.child(service, handler, HANDLER_SUCCESS.true), this.child(service, handler, HANDLER_SUCCESS.false)];
  }

  private child(service: string, handler: string, success: HandlerSuccess): Observe {
    const k = `${service}\u0000${handler}\u0000${success}`;
    let cell = this.cells.get(k);
    if (!cell) {
      cell = { labels: { service, handler, success }, counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.cells.set(k, cell);
    }
    const c = cell;
    const b = this.buckets;
    return (v) => {
      let i = 0;
      while (i < b.length && v > b[i]!) i++;
      c.counts[i]!++;
      c.sum += v;
      c.count++;
    };
  }

  /** prom-client's `MetricObject` of the histogram (cumulative `_bucket`, `_sum`, `_count`). */
  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const c of this.cells.values()) {
      let cum = 0;
      this.buckets.forEach((le, i) => {
        cum += c.counts[i]!;
        values.push({ labels: { ...c.labels, le }, value: cum, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...c.labels, le: "+Inf" }, value: c.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...c.labels }, value: c.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...c.labels }, value: c.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Sets every series back to 0 and keeps it (`Registry.resetMetrics`; bound observers stay valid). */
  reset(): void {
    for (const c of this.cells.values()) {
      c.counts.fill(0);
      c.sum = 0;
      c.count = 0;
    }
  }
}
