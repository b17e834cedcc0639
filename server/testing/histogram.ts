import type { Registry } from "prom-client";

/** How many observations the histogram `name` on `registry` holds, summed over its label sets. */
export async function observationCount(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name} on the registry`);
  const { values } = await metric.get();
  return values
    .filter((v) => (v as { metricName?: string }).metricName === `${name}_count`)
    .reduce((sum, v) => sum + v.value, 0);
}
