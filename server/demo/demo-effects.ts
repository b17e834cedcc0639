/**
 * The live demo's totals as this process counted them (`GET /api/demo/effects`): what each switch
 * changes — swallowed copies, failed attempts and released keys (retry on error), DLQ, store errors,
 * the check's duration buckets — so the workshop page shows a switch's effect beside it.
 */
import type { Registry } from "prom-client";
import type { DemoEffectCounts, DemoEffects } from "@/lib/api/demo";
import { LABEL, METRIC_NAMES, PROCESSED_RESULT } from "@/names/dedup";
import { SIDE_EFFECT_METRICS } from "@/server/notification/side-effects";

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

/** The demo's totals of `service` on `registry` (the app's) now. */
export async function demoEffects(
  registry: Registry,
  service: string,
): Promise<Pick<DemoEffects, "service" | "at" | "counts" | "checkBuckets">> {
  const byName = new Map<string, Value[]>();
  // getMetricsAsJSON runs each metric's collect, which flushes its pending increments.
  for (const m of await registry.getMetricsAsJSON()) byName.set(m.name, m.values as Value[]);
  const ours = (name: string, also: (v: Value) => boolean = () => true) =>
    (byName.get(name) ?? []).filter((v) => v.labels[LABEL.service] === service && also(v));
  const sum = (vs: Value[]) => vs.reduce((a, v) => a + v.value, 0);
  const processed = (result: string) => sum(ours(METRIC_NAMES.processed, (v) => v.labels[LABEL.result] === result));
  const counts: DemoEffectCounts = {
    processed: processed(PROCESSED_RESULT.success),
    deduplicated: processed(PROCESSED_RESULT.deduplicated),
    handlerErrors: sum(
      ours(
        METRIC_NAMES.handlerExecutionTime,
        (v) => v.metricName === `${METRIC_NAMES.handlerExecutionTime}_count` && v.labels[LABEL.success] === "false",
      ),
    ),
    released: sum(ours(METRIC_NAMES.released)),
    poisoned: sum(ours(METRIC_NAMES.poisoned)),
    dedupErrors: sum(ours(METRIC_NAMES.errors)),
    // The push ledger's counters carry only the handler: on the app's registry they are the demo's.
    sideEffects: sum(byName.get(SIDE_EFFECT_METRICS.sent) ?? []),
    duplicateSideEffects: sum(byName.get(SIDE_EFFECT_METRICS.duplicate) ?? []),
  };
  const buckets = new Map<number | null, number>();
  for (const v of ours(METRIC_NAMES.checkDuration, (x) => x.metricName === `${METRIC_NAMES.checkDuration}_bucket`)) {
    const le = v.labels.le === "+Inf" ? null : Number(v.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + v.value);
  }
  const checkBuckets = [...buckets.entries()]
    .map(([le, count]) => ({ le, count }))
    .sort((a, b) => (a.le ?? Infinity) - (b.le ?? Infinity));
  return { service, at: new Date().toISOString(), counts, checkBuckets };
}
