/**
 * The order statistics the benchmarks, the fault suite and the e2e probes report: one definition
 * of a median and of a percentile, so a "p95" means the same in every figure.
 */

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);

/** The middle value of `xs` (the mean of the two middle values for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  const s = sorted(xs);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The `p`-th percentile (0..100) of `xs` by nearest rank: the smallest sample with at least `p` %
 * of the samples at or below it (the largest for p = 100, the smallest for p = 0); NaN when empty.
 */
export function percentile(xs: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile: p must be in [0, 100] (got ${p})`);
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}
