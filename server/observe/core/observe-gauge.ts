/**
 * The gauges the dashboard exports beside the library's (names/observe.ts), each refilled at every
 * scrape of the app's registry from what its reader answers — **on the fleet's leader only**
 * (server/replicas/leader.ts): a follower replica exports them empty and never calls the reader,
 * so Prometheus sums one figure for the fleet however many replicas it scrapes.
 */
import { Gauge, type Registry } from "prom-client";
import { OBSERVE_METRIC_LABELS, OBSERVE_METRIC_NAMES } from "@/names/observe";
import { exportsFleetGauges } from "@/server/replicas/leader";

type ObserveMetric = keyof typeof OBSERVE_METRIC_NAMES;

/** One value of the gauge `M`, with every label it declares. */
export interface ObserveGaugeValue<M extends ObserveMetric> {
  labels: Record<(typeof OBSERVE_METRIC_LABELS)[M][number], string>;
  value: number;
}

/**
 * Registers the gauge `metric` on `registry` (get-or-create: a second call leaves the first). Each
 * scrape replaces its values with what `read` answers, or keeps the last ones when it answers `null`;
 * on a follower replica it is empty and `read` is not called.
 */
export function registerObserveGauge<M extends ObserveMetric>(
  registry: Registry,
  metric: M,
  help: string,
  read: () => Promise<ReadonlyArray<ObserveGaugeValue<M>> | null>,
): void {
  const name = OBSERVE_METRIC_NAMES[metric];
  if (registry.getSingleMetric(name)) return;
  new Gauge({
    name,
    help,
    labelNames: [...OBSERVE_METRIC_LABELS[metric]],
    registers: [registry],
    async collect() {
      if (!exportsFleetGauges()) {
        this.reset();
        return;
      }
      const values = await read();
      if (!values) return;
      this.reset();
      for (const v of values) this.set(v.labels, v.value);
    },
  });
}
