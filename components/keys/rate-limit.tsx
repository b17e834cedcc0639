"use client";

import { ApiError } from "@/lib/query-options";

/** Retries of a 429 before the error is shown as such (each after the server's `Retry-After`). */
export const RATE_LIMIT_RETRIES = 5;

/** The `Retry-After` of a 429 in ms, or null when `e` is not a 429. */
export function retryAfterMs(e: unknown): number | null {
  if (!(e instanceof ApiError) || e.status !== 429) return null;
  const s = Number(e.body.retryAfterSeconds);
  return (Number.isFinite(s) && s > 0 ? s : 1) * 1000;
}

/**
 * Query options of the key routes (`/api/keys`, `/api/keys/lookup`): a 429 (the shared Redis budget
 * or the per-client limit) is retried after its `Retry-After`, up to {@link RATE_LIMIT_RETRIES}
 * times; any other error once, as elsewhere.
 */
export const rateLimitRetry = {
  retry: (failures: number, e: unknown) => (retryAfterMs(e) !== null ? failures < RATE_LIMIT_RETRIES : failures < 1),
  retryDelay: (failures: number, e: unknown) => retryAfterMs(e) ?? Math.min(1000 * 2 ** failures, 30_000),
};

/** While a 429 is being waited out: says so and when the retry goes (nothing otherwise). */
export function RateLimitNotice({ reason, fetching }: { reason: unknown; fetching: boolean }) {
  const ms = retryAfterMs(reason);
  if (ms === null || !fetching) return null;
  return (
    <p role="status" data-testid="rate-limited" className="text-xs text-amber-800 dark:text-amber-300">
      The key browser&apos;s Redis budget is busy (shared by every viewer); retrying in {Math.round(ms / 1000)} s…
    </p>
  );
}
