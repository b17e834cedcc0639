/**
 * Which bucket a quantile computed from a histogram lies in, said beside the figure. A
 * `histogram_quantile` is an interpolation inside one bucket, not a measured value: 100 ms added to
 * every dedup check puts the checks in the 100–250 ms bucket, whose p99 reads 248.5 ms; the bucket
 * is what was measured. Callers pass the bounds of names/buckets.ts (the metrics contract's buckets).
 */
/** A bucket `(lo, hi]` in seconds; `hi` is `Infinity` above the highest bound. */
export interface Bucket {
  lo: number;
  hi: number;
}

/**
 * The bucket `(lo, hi]` a quantile of `seconds` was interpolated in, given the histogram's
 * `bounds` (ascending); `null` without a finite value or bounds. Prometheus answers the highest
 * finite bound for a quantile in the +Inf bucket, so that bound reads as "above the one before".
 */
export function bucketOf(seconds: number | null | undefined, bounds: readonly number[]): Bucket | null {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || bounds.length === 0) return null;
  const top = bounds[bounds.length - 1]!;
  if (seconds >= top) return { lo: bounds.length > 1 ? bounds[bounds.length - 2]! : 0, hi: Infinity };
  let lo = 0;
  for (const hi of bounds) {
    if (seconds <= hi) return { lo, hi };
    lo = hi;
  }
  return { lo: top, hi: Infinity };
}

/** A bound as a duration: `0.1` → "100 ms", `0.0005` → "0.5 ms", `2.5` → "2.5 s". */
function bound(seconds: number): string {
  const ms = Math.round(seconds * 1e6) / 1e3;
  return seconds < 1 ? `${ms.toLocaleString("en-US")} ms` : `${seconds.toLocaleString("en-US")} s`;
}

/** A bucket in words: "100–250 ms", "0–0.5 ms", "500 ms–1 s", "over 1 s". */
export function formatBucket(b: Bucket): string {
  if (b.hi === Infinity) return `over ${bound(b.lo)}`;
  const [lo, hi] = [bound(b.lo), bound(b.hi)];
  const unit = (s: string) => s.replace(/^[\d.,]+ /, "");
  return unit(lo) === unit(hi) || b.lo === 0 ? `${lo.replace(/ \S+$/, "")}–${hi}` : `${lo}–${hi}`;
}

/**
 * "bucket 100–250 ms": the bucket a histogram quantile of `seconds` lies in, to show beside the
 * interpolated figure; `null` without a figure.
 */
export function bucketText(seconds: number | null | undefined, bounds: readonly number[]): string | null {
  const b = bucketOf(seconds, bounds);
  return b ? `bucket ${formatBucket(b)}` : null;
}

/**
 * A histogram quantile with its bucket: `0.2485` → "248.5 ms (bucket 100–250 ms)"; `format`
 * renders the interpolated figure; "—" without one.
 */
export function formatQuantile(
  seconds: number | null | undefined,
  bounds: readonly number[],
  format: (s: number) => string,
): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const b = bucketText(seconds, bounds);
  return b ? `${format(seconds)} (${b})` : format(seconds);
}
