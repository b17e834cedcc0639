import { perMessageForm } from "../router/batch-run";
import { namedMiddleware, type Handler, type Message, type Middleware } from "../message";

/** Options of {@link timeout}. */
export interface TimeoutOptions {
  /**
   * Time limit of ONE attempt of the rest of the stack, ms. Keep it below the Deduplicator's
   * `leaseMs` (the lint warns otherwise): an attempt that outlives the lease lets another consumer
   * take the key and run the message too. @default 30000 (half the default 60 s lease)
   */
  timeoutMs?: number;
}

/** Defaults of {@link TimeoutOptions}. */
export const DEFAULT_TIMEOUT_OPTIONS = { timeoutMs: 30_000 } as const satisfies Required<TimeoutOptions>;

/**
 * An attempt that outlived `timeout`'s `timeoutMs`. **Retryable**: Retry runs the next attempt,
 * and after the last one PoisonQueue sends the message to the DLQ (`reason_poisoned` class
 * `handler_error`).
 */
export class HandlerTimeoutError extends Error {
  readonly retryable = true;
  readonly timeoutMs: number;
  constructor(timeoutMs: number, handler?: string) {
    super(
      `handler ${handler ?? "(unnamed)"} attempt exceeded timeoutMs ${timeoutMs}; make it faster, raise timeoutMs (below leaseMs), or pass msg.signal to its slow calls`,
    );
    this.name = "HandlerTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** Validates and merges timeout options (a number is `timeoutMs`). */
export function resolveTimeoutOptions(options: number | TimeoutOptions = {}): Required<TimeoutOptions> {
  const o = { ...DEFAULT_TIMEOUT_OPTIONS, ...(typeof options === "number" ? { timeoutMs: options } : options) };
  if (!(Number.isFinite(o.timeoutMs) && o.timeoutMs >= 1 && o.timeoutMs <= 86_400_000)) {
    throw new RangeError(
      `timeout: timeoutMs must be in [1, 86400000] ms (below the Deduplicator's leaseMs), got ${o.timeoutMs}`,
    );
  }
  return o;
}

/**
 * The message the inner handler sees: the same message, whose `signal` also aborts when the
 * attempt times out. The combined signal is built only if the handler reads it (most never do, and
 * an AbortController per attempt is not free). Metadata and context stay the outer message's.
 */
function attemptMessage(msg: Message, timedOut: { reason: Error | null; controller: AbortController | null }): Message {
  return {
    uuid: msg.uuid,
    payload: msg.payload,
    get metadata() {
      return msg.metadata;
    },
    set metadata(v) {
      msg.metadata = v;
    },
    get context() {
      return msg.context;
    },
    set context(v) {
      msg.context = v;
    },
    get signal() {
      if (!timedOut.controller) {
        const c = new AbortController();
        timedOut.controller = c;
        if (timedOut.reason) c.abort(timedOut.reason);
        else if (msg.signal.aborted) c.abort(msg.signal.reason);
        else msg.signal.addEventListener("abort", () => c.abort(msg.signal.reason), { once: true });
      }
      return timedOut.controller.signal;
    },
  };
}

/**
 * Bounds one attempt of the rest of the stack (Watermill's `Timeout`): after `timeoutMs` the
 * attempt fails with a retryable {@link HandlerTimeoutError} and the handler's `msg.signal`
 * aborts. Put it **inside the Deduplicator**, below its `leaseMs` (`defaultStack` does with its
 * `timeoutMs` option): the attempt then fails, and releases its key, before the lease could expire.
 *
 * **JavaScript cannot cancel a running promise: the handler's work goes on after its attempt failed
 * unless the handler reads `msg.signal`** (passes it to `fetch`, its database driver, or checks
 * `signal.aborted` between steps). Meanwhile Retry may start the next attempt, so a handler that
 * ignores the signal can run twice at once: it must be idempotent (spec §5). Its late result is
 * dropped and its late error swallowed.
 */
export function timeout(options: number | TimeoutOptions = {}): Middleware {
  const { timeoutMs } = resolveTimeoutOptions(options);
  const wrap =
    (next: Handler): Handler =>
    (msg) => {
      const state: { reason: Error | null; controller: AbortController | null } = { reason: null, controller: null };
      let work: ReturnType<typeof next>;
      try {
        work = next(attemptMessage(msg, state));
      } catch (e) {
        return Promise.reject(e);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          state.reason = new HandlerTimeoutError(timeoutMs, msg.context.handler);
          state.controller?.abort(state.reason);
          reject(state.reason);
        }, timeoutMs);
        work.then(
          (v) => {
            clearTimeout(timer);
            resolve(v);
          },
          (e: unknown) => {
            clearTimeout(timer);
            reject(e);
          },
        );
      });
    };
  return namedMiddleware("timeout", wrap, { batch: perMessageForm(wrap) });
}
