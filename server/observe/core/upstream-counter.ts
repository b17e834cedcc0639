/**
 * Counts calls the dashboard makes to its upstreams (Prometheus HTTP requests, Redis commands or
 * pipelines, statements on the PostgreSQL inbox table), so tests and `npm run bench:inspect` can show that 50 viewers cost the same as one.
 * Kept on `globalThis` (Next.js evaluates modules more than once).
 */
export type UpstreamKind = "prometheus" | "redis" | "postgres";

function counters(): Record<UpstreamKind, number> {
  const g = globalThis as typeof globalThis & { __dedupHealthUpstreamCalls?: Record<UpstreamKind, number> };
  g.__dedupHealthUpstreamCalls ??= { prometheus: 0, redis: 0, postgres: 0 };
  return g.__dedupHealthUpstreamCalls;
}

/** Runs `fn` (one upstream round trip) and counts it under `kind`. */
export function countUpstream<T>(kind: UpstreamKind, fn: () => Promise<T>): Promise<T> {
  counters()[kind]++;
  return fn();
}

/** A copy of the counters: calls since process start. */
export function upstreamCalls(): Record<UpstreamKind, number> {
  return { ...counters() };
}
