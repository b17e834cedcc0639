import { toError } from "../errors";
import { recoverEach } from "../router/batch-run";
import { namedMiddleware, type Handler, type Message, type Middleware } from "../message";

/** Options of {@link retry}. Delays follow exponential backoff with jitter; the first attempt runs at once. */
export interface RetryOptions {
  /** Retries after the first attempt (so attempts = maxRetries + 1). @default 4 */
  maxRetries?: number;
  /** Delay before the first retry, before jitter. @default 1000 */
  initialIntervalMs?: number;
  /** Cap of a delay, before jitter. @default 30000 */
  maxIntervalMs?: number;
  /** Growth factor of the delay per retry. @default 2 */
  multiplier?: number;
  /** Jitter: each delay is drawn uniformly from interval × [1 − f, 1 + f]. @default 0.5 */
  randomizationFactor?: number;
  /** Give up when the next delay would end after this much time since the first attempt; 0 = no limit. @default 0 */
  maxElapsedMs?: number;
  /**
   * Whether to retry after `err` (attempt = the attempt that just failed, 1-based).
   * `NonRetryableError` and any error with `retryable === false` never retry, whatever this says.
   * @default () => true
   */
  shouldRetry?: (err: Error, attempt: number, msg: Message) => boolean;
  /** Called before each delay. It cannot change the delay (unlike Watermill's hook pitfall). @default none */
  onRetry?: (info: { attempt: number; delayMs: number; error: Error; msg: Message }) => void;
  /** Source of randomness in [0, 1). @default Math.random */
  random?: () => number;
}

/** Defaults of {@link RetryOptions}. Worst case: delays 1+2+4+8 s × 1.5 jitter = 22.5 s of waiting. */
export const DEFAULT_RETRY_OPTIONS = {
  maxRetries: 4,
  initialIntervalMs: 1000,
  maxIntervalMs: 30_000,
  multiplier: 2,
  randomizationFactor: 0.5,
  maxElapsedMs: 0,
  shouldRetry: () => true,
  onRetry: () => undefined,
  random: Math.random,
} as const satisfies Required<RetryOptions>;

function check(cond: boolean, message: string): void {
  if (!cond) throw new RangeError(`retry: ${message}`);
}

/** Validates and merges retry options (exported for the Deduplicator's lease arithmetic and lint). */
export function resolveRetryOptions(options: RetryOptions = {}): Required<RetryOptions> {
  const o = { ...DEFAULT_RETRY_OPTIONS, ...options };
  check(
    Number.isInteger(o.maxRetries) && o.maxRetries >= 0 && o.maxRetries <= 1000,
    "maxRetries must be an integer in [0, 1000]",
  );
  check(o.initialIntervalMs >= 0 && o.initialIntervalMs <= 3_600_000, "initialIntervalMs must be in [0, 3600000]");
  check(
    o.maxIntervalMs >= o.initialIntervalMs && o.maxIntervalMs <= 3_600_000,
    "maxIntervalMs must be in [initialIntervalMs, 3600000]",
  );
  check(o.multiplier >= 1 && o.multiplier <= 100, "multiplier must be in [1, 100]");
  check(o.randomizationFactor >= 0 && o.randomizationFactor <= 1, "randomizationFactor must be in [0, 1]");
  check(o.maxElapsedMs >= 0, "maxElapsedMs must be ≥ 0 (0 = no limit)");
  return o;
}

/** The longest total waiting time of a retry configuration (every delay at its jitter maximum). */
export function maxRetryWaitMs(options: RetryOptions = {}): number {
  const o = resolveRetryOptions(options);
  let total = 0;
  for (let i = 0; i < o.maxRetries; i++)
    total += Math.min(o.initialIntervalMs * o.multiplier ** i, o.maxIntervalMs) * (1 + o.randomizationFactor);
  return o.maxElapsedMs > 0 ? Math.min(total, o.maxElapsedMs) : total;
}

/**
 * Runs the rest of the stack again after a failure, with exponential backoff and jitter; the first
 * attempt has no delay. Stops at once on `NonRetryableError` (or `retryable === false`), when
 * `shouldRetry` says no, when `maxElapsedMs` would be exceeded, or when the message's signal aborts;
 * then the last error propagates (to PoisonQueue). Sets `msg.context.attempt`.
 */
export function retry(options: RetryOptions = {}): Middleware {
  const o = resolveRetryOptions(options);
  /** After attempt `attempt` failed with `e`: waits the backoff and resolves, or rejects with the error to give up with. */
  const backOff = async (e: unknown, attempt: number, msg: Message, start: number): Promise<void> => {
    const err = toError(e);
    if (attempt > o.maxRetries || msg.signal.aborted) throw err;
    if ((err as { retryable?: unknown }).retryable === false || !o.shouldRetry(err, attempt, msg)) throw err;
    const interval = Math.min(o.initialIntervalMs * o.multiplier ** (attempt - 1), o.maxIntervalMs);
    const delayMs = Math.round(interval * (1 + o.randomizationFactor * (2 * o.random() - 1)));
    if (o.maxElapsedMs > 0 && Date.now() - start + delayMs > o.maxElapsedMs) throw err;
    o.onRetry({ attempt, delayMs, error: err, msg });
    if (!(await sleep(delayMs, msg.signal))) throw err;
  };
  /** Attempts `from`, `from + 1`, … of `msg` until one succeeds or `backOff` gives up. */
  const attempts = async (next: Handler, msg: Message, from: number, start: number): Promise<void | Message[]> => {
    for (let attempt = from; ; attempt++) {
      msg.context.attempt = attempt;
      try {
        return await next(msg);
      } catch (e) {
        await backOff(e, attempt, msg, start);
      }
    }
  };
  return namedMiddleware("retry", (next) => (msg) => attempts(next, msg, 1, Date.now()), {
    // A Router batch runs every message's first attempt in the batch; a failed one is retried here
    // before any later message runs. With maxElapsedMs the first attempt's start time of each
    // message counts, which the batch does not keep: such a stack delivers message by message.
    batch:
      o.maxElapsedMs > 0
        ? undefined
        : (next, nextBatch) => (msgs, stop) => {
            for (const m of msgs) m.context.attempt = 1;
            return recoverEach(nextBatch, async (msg, e) => {
              await backOff(e, 1, msg, 0);
              await attempts(next, msg, 2, 0);
            })(msgs, stop);
          },
  });
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!signal.aborted);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
