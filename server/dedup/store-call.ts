import { DedupStoreError } from "./errors";
import { DEDUP_ERROR_REASON, type DedupErrorReason } from "../../names/dedup";

/** A store call that exceeded `timeoutMs`. */
export class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`dedup store call exceeded timeoutMs=${ms}`);
    this.name = "StoreTimeoutError";
  }
}

/**
 * Classifies a store failure for `deduplication_errors_total{reason}`: our timeout and
 * ETIMEDOUT → `redis_timeout`; everything else from the store (refused, closed, max retries
 * per request, reply errors) → `redis_conn`. Key-factory failures are `marshal` (not from here).
 */
export function classifyStoreError(e: unknown): DedupErrorReason {
  if (e instanceof StoreTimeoutError) return DEDUP_ERROR_REASON.redisTimeout;
  if (e instanceof DedupStoreError) return e.reason;
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (code === "ETIMEDOUT" || /timed? ?out/i.test(message)) return DEDUP_ERROR_REASON.redisTimeout;
  return DEDUP_ERROR_REASON.redisConn;
}

/** `p`, or a rejection with {@link StoreTimeoutError} after `ms`. */
export function timed<T>(p: Promise<T>, ms: number): Promise<T> {
  return withTimeout(p, ms, () => new StoreTimeoutError(ms));
}

/**
 * `p`, or a rejection with `onTimeout()` after `ms` (the timer is cleared when `p` settles first;
 * `p` itself is not cancelled). The library's one timeout helper; the rest of the server uses it too.
 */
export function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(onTimeout()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
