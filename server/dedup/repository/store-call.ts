import { DedupStoreError } from "../errors";
import { DEDUP_ERROR_REASON, type DedupErrorReason } from "../../../names/dedup";

/** A store call that exceeded `timeoutMs` while the store's connection stayed ready. */
export class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`dedup store call exceeded timeoutMs=${ms}`);
    this.name = "StoreTimeoutError";
  }
}

/**
 * A store call that failed (or outlived `timeoutMs`) while the store's connection was not ready at
 * some moment of the call: the store was unreachable, not slow. The original error is the `cause`.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/** What {@link timed} asks of the repository: whether its connection was lost during a call. */
export interface ConnectionWatch {
  /** See `DedupRepository.connectionLostSince`. */
  connectionLostSince?(since: number): boolean;
}

/** Socket error codes that say the connection is gone or never came up (not that the store is slow). */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ENOTCONN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Classifies a store failure for `deduplication_errors_total{reason}` by what happened, never by
 * elapsed time: our timeout and a client's command timeout on a connection that stayed ready →
 * `redis_timeout`; a connection that was refused, reset, closed or not ready during the call (see
 * {@link timed}), and every other store error → `redis_conn`. Key-factory failures are `marshal`
 * (not from here).
 */
export function classifyStoreError(e: unknown): DedupErrorReason {
  if (e instanceof StoreUnavailableError) return DEDUP_ERROR_REASON.redisConn;
  if (e instanceof StoreTimeoutError) return DEDUP_ERROR_REASON.redisTimeout;
  if (e instanceof DedupStoreError) return e.reason;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return DEDUP_ERROR_REASON.redisConn;
  const message = e instanceof Error ? e.message : String(e);
  if (code === "ETIMEDOUT" || /timed? ?out/i.test(message)) return DEDUP_ERROR_REASON.redisTimeout;
  return DEDUP_ERROR_REASON.redisConn;
}

/**
 * `p`, or a rejection with {@link StoreTimeoutError} after `ms`. With a `watch` (the repository),
 * a failure or timeout during which the connection was not ready at some moment rejects with
 * {@link StoreUnavailableError} instead: on a busy event loop the timeout timer can fire before the
 * socket's close or refusal is even read, so the decision waits one turn of the loop (`setImmediate`
 * runs after pending I/O) and then asks the connection, not the clock.
 */
export function timed<T>(p: Promise<T>, ms: number, watch?: ConnectionWatch): Promise<T> {
  if (!watch?.connectionLostSince) return withTimeout(p, ms, () => new StoreTimeoutError(ms));
  const since = performance.now();
  const lost = watch.connectionLostSince.bind(watch);
  return withTimeout(p, ms, () => new StoreTimeoutError(ms)).catch(
    (e: unknown) =>
      new Promise<T>((_, reject) =>
        setImmediate(() =>
          reject(
            lost(since)
              ? new StoreUnavailableError(
                  `dedup store connection not ready during the call: ${(e as Error)?.message ?? e}`,
                  { cause: e },
                )
              : e,
          ),
        ),
      ),
  );
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
