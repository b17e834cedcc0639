/**
 * The batch form of the middleware stack: a Router batch runs through every layer once per batch
 * instead of once per message (no promise chain per message per layer), with each message's
 * semantics unchanged — messages still run one at a time, in order, and a failure is handled by each
 * layer for that message before the next message runs.
 */
import {
  namedMiddleware,
  type BatchForm,
  type BatchHandler,
  type Handler,
  type Message,
  type Middleware,
  type MiddlewareHooks,
} from "../message";

/** A batch handler that runs `handler` for each message in order (the innermost layer, or a layer that acts per message). */
export function eachInOrder(handler: Handler): BatchHandler {
  return async (msgs, stop) => {
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      if (m.signal.aborted || stop.aborted) return { ran: i };
      try {
        await handler(m);
      } catch (error) {
        return { ran: i, failure: { error } };
      }
    }
    return { ran: msgs.length };
  };
}

/** The batch form of a middleware that acts per message only: its per-message wrapper run for each message in order. */
export function perMessageForm(wrap: (next: Handler) => Handler): BatchForm {
  return (next) => eachInOrder(wrap(next));
}

/**
 * A layer that acts only when a message fails: runs the batch through `nextBatch`; when message k
 * fails, `recover(msgs[k], error)` does what the per-message form does with that failure before any
 * later message runs — resolves (the message is done: the batch goes on after it) or rejects (the
 * batch stops with that failure at k).
 */
export function recoverEach(
  nextBatch: BatchHandler,
  recover: (msg: Message, error: unknown) => Promise<void>,
): BatchHandler {
  return async (msgs, stop) => {
    let from = 0;
    let part = msgs;
    for (;;) {
      const r = await nextBatch(part, stop);
      if (!r.failure) return from === 0 ? r : { ran: from + r.ran };
      const k = from + r.ran;
      try {
        await recover(msgs[k]!, r.failure.error);
      } catch (error) {
        return { ran: k, failure: { error } };
      }
      from = k + 1;
      if (from >= msgs.length) return { ran: msgs.length };
      part = msgs.slice(from);
    }
  };
}

/**
 * A middleware that acts only when a message fails, in both forms: per message when `next` rejects,
 * per batch through {@link recoverEach}. `recover(msg, error)` resolves (the message is done: acked)
 * or rejects (the failure goes on outwards).
 */
export function onFailure(
  name: string,
  recover: (msg: Message, error: unknown) => Promise<void>,
  hooks: Omit<MiddlewareHooks, "batch"> = {},
): Middleware {
  return namedMiddleware(
    name,
    (next) => async (msg) => {
      try {
        return await next(msg);
      } catch (e) {
        return recover(msg, e);
      }
    },
    { ...hooks, batch: (_next, nextBatch) => recoverEach(nextBatch, recover) },
  );
}
