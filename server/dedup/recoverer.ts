import { toError } from "./errors";
import { namedMiddleware, type Middleware } from "./message";

/**
 * Turns any thrown value (a string, `undefined`, a plain object, a synchronous throw) into an
 * `Error` with a stack, so that PoisonQueue's `reason_poisoned` and every log have a message.
 * JavaScript has no panics to recover from; a rejected promise is the equivalent.
 */
export function recoverer(): Middleware {
  return namedMiddleware("recoverer", (next) => async (msg) => {
    try {
      return await next(msg);
    } catch (e) {
      const err = toError(e);
      if (!err.stack) Error.captureStackTrace(err, recoverer);
      throw err;
    }
  });
}
