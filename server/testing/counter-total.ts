import type { Registry } from "prom-client";

/** A prom-client counter or gauge as the tests read it. */
export type Counter = { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> };

/** The sum of `c`'s series whose labels pass `filter` (all of them by default). */
export const counterTotal = async (
  c: Counter,
  filter: (l: Record<string, unknown>) => boolean = () => true,
): Promise<number> => (await c.get()).values.filter((v) => filter(v.labels)).reduce((a, v) => a + v.value, 0);

/** The sum of the series of metric `name` in `registry` whose labels include `labels`; 0 when the metric is not registered. */
export async function registryTotal(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = registry.getSingleMetric(name);
  return m ? counterTotal(m as Counter, (l) => Object.entries(labels).every(([k, x]) => l[k] === x)) : 0;
}
