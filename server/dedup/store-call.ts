import { DedupStoreError } from "./errors";
import { type DedupErrorReason } from "./names";

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
  if (e instanceof StoreTimeoutError) return "redis_timeout";
  if (e instanceof DedupStoreError) return e.reason;
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (code === "ETIMEDOUT" || /timed? ?out/i.test(message)) return "redis_timeout";
  return "redis_conn";
}

/** `p`, or a rejection with {@link StoreTimeoutError} after `ms`. */
export function timed<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new StoreTimeoutError(ms)), ms);
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
