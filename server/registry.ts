import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * The app's one prom-client Registry, kept on `globalThis`: what `GET /api/metrics` serves and
 * Prometheus scrapes — production series only (the demo service's handlers, never a workshop run).
 *
 * **Never use prom-client's global default registry and never `clear()` this one**: Next.js builds
 * route handlers, pages and `instrumentation.ts` into separate bundles and dev reload re-evaluates
 * modules, so this module can be evaluated several times in one process. Keeping the Registry on
 * `globalThis` makes every copy share it; metrics are created get-or-create on it (see
 * `server/dedup/metrics/metrics.ts`).
 */
export function appRegistry(): Registry {
  const g = globalThis as typeof globalThis & { __dedupHealthRegistry?: Registry };
  if (!g.__dedupHealthRegistry) {
    const r = new Registry();
    // The process' own figures (event-loop delay `nodejs_eventloop_lag_p99_seconds`, CPU, heap):
    // the dedup check p99 is timed in this process, so a saturated event loop must be visible
    // beside it. Once per registry (a second call would register the same names twice).
    collectDefaultMetrics({ register: r, eventLoopMonitoringPrecision: 10 });
    g.__dedupHealthRegistry = r;
  }
  return g.__dedupHealthRegistry;
}

/**
 * The workshop's own Registry, kept on `globalThis` like {@link appRegistry}: the Deduplicator,
 * PoisonQueue and push counters of workshop runs count here. **Never served by `/api/metrics`**
 * (a run's `topic` label carries its run id: unbounded cardinality, and the production alert rules
 * must not evaluate a two-second scenario); `GET /api/workshop/metrics` shows it on the workshop
 * page. A run's series are removed when the run ends (see `ScenarioContext.teardown`).
 */
export function workshopRegistry(): Registry {
  const g = globalThis as typeof globalThis & { __dedupHealthWorkshopRegistry?: Registry };
  g.__dedupHealthWorkshopRegistry ??= new Registry();
  return g.__dedupHealthWorkshopRegistry;
}
