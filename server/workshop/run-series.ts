/**
 * A workshop run's counters on the workshop registry: read (the run's page shows them) and removed
 * when the run ends, so the registry stays bounded however many runs there were.
 */
import type { Metric, Registry } from "prom-client";
import type { RunSeries } from "@/lib/api/workshop";

/** Every counter value on `registry` labelled with one of `topics`, sorted by name then labels; none without a registry. */
export async function runSeries(registry: Registry | undefined, topics: readonly string[]): Promise<RunSeries[]> {
  if (!registry) return [];
  const mine = new Set(topics);
  const out: RunSeries[] = [];
  // getMetricsAsJSON runs each counter's collect, which flushes its pending increments.
  for (const m of await registry.getMetricsAsJSON()) {
    for (const v of m.values) {
      if (!mine.has(String(v.labels.topic ?? ""))) continue;
      out.push({
        name: m.name,
        labels: Object.fromEntries(Object.entries(v.labels).map(([k, x]) => [k, String(x)])),
        value: v.value,
      });
    }
  }
  return out.sort(
    (a, b) => a.name.localeCompare(b.name) || JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)),
  );
}

/** Removes each of `series` from its metric on `registry`. */
export function dropRunSeries(registry: Registry, series: readonly RunSeries[]): void {
  for (const s of series) {
    const metric = registry.getSingleMetric(s.name) as
      (Metric & { remove?: (labels: Record<string, string>) => void }) | undefined;
    metric?.remove?.(s.labels);
  }
}
