/**
 * The bucket bounds (seconds) of the library's two histograms, part of the metrics contract
 * (docs/CONTRACT.md; the conformance kit compares a consumer's buckets with these). Here rather
 * than in the library so the pages can say which bucket a quantile computed from them lies in: a
 * `histogram_quantile` over buckets is an interpolation inside one bucket, never a measured value
 * (100 ms added to every check reads as a p99 near 250 ms, the top of the 100–250 ms bucket).
 */

/**
 * Buckets of `deduplication_check_duration_seconds`: include the spec's 0.005…0.1 and the alert
 * threshold `SLOW_CHECK_SECONDS` (0.05 s: the slow checks of a window are `_count` minus its bucket).
 */
export const CHECK_DURATION_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/**
 * Buckets of `handler_execution_time_seconds`, in seconds: fine below a second (most handlers),
 * then up to and past the default lease (`leaseMs` 60 s): 15 and 30 s bracket half the lease
 * (where the lint warns that a takeover is near), 60 s is the lease itself, 120 and 300 s say by
 * how much a handler outlived it.
 */
export const HANDLER_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300,
];
