import { onFailure } from "../router/batch-run";
import { toError } from "../errors";
import type { Middleware } from "../message";

/** `e` as an Error with a stack. */
function recovered(e: unknown): Error {
  const err = toError(e);
  if (!err.stack) Error.captureStackTrace(err, recoverer);
  return err;
}

/**
 * Turns any thrown value (a string, `undefined`, a plain object, a synchronous throw) into an
 * `Error` with a stack, so that PoisonQueue's `reason_poisoned` and every log have a message.
 * JavaScript has no panics to recover from; a rejected promise is the equivalent.
 */
export function recoverer(): Middleware {
  return onFailure("recoverer", async (_msg, e) => {
    throw recovered(e);
  });
}
