import { Registry } from "prom-client";

/**
 * The app's one prom-client Registry, kept on `globalThis`.
 *
 * **Never use prom-client's global default registry and never `clear()` this one**: Next.js builds
 * route handlers, pages and `instrumentation.ts` into separate bundles and dev reload re-evaluates
 * modules, so this module can be evaluated several times in one process. Keeping the Registry on
 * `globalThis` makes every copy share it; metrics are created get-or-create on it (see
 * `server/dedup/metrics.ts`).
 */
export function appRegistry(): Registry {
  const g = globalThis as typeof globalThis & { __dedupHealthRegistry?: Registry };
  g.__dedupHealthRegistry ??= new Registry();
  return g.__dedupHealthRegistry;
}
