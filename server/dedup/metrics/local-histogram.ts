/**
 * The library's histograms (`deduplication_check_duration_seconds`, `handler_execution_time_seconds`):
 * prom-client's exposition, with a hot path of one bucket search and three additions per
 * observation through a bound observer — no label hashing (prom-client's `observe` spends ~0.7 µs
 * hashing labels per call, a quarter of the middleware's budget). Registered get-or-create by
 * `dedupMetrics` (./metrics).
 */

/** Records one observation (seconds) into the series it was bound to. */
export type Observe = (seconds: number) => void;

interface Cell<L> {
  labels: L;
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram for a prom-client Registry whose series are bound once and observed without hashing. */
export class LocalHistogram<L extends Record<string, string>> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly cells = new Map<string, Cell<L>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
    readonly labelNames: readonly (keyof L & string)[],
  ) {}

  /** The observer of one label set; creates its series at 0 on first call (so the first sample is an increase from 0). */
  observer(labels: L): Observe {
    const k = this.labelNames.map((n) => labels[n]).join("\u0000");
    let cell = this.cells.get(k);
    if (!cell) {
      cell = { labels: { ...labels }, counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
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

  /** One observation (looks the series up: use {@link observer} on a hot path). */
  observe(labels: L, seconds: number): void {
    this.observer(labels)(seconds);
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
