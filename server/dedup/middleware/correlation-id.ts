import { randomUUID } from "node:crypto";
import { namedMiddleware, type Message, type Middleware } from "../message";
import { CORRELATION_ID_KEY } from "../../../names/dedup";

/**
 * Ensures every message carries `Correlation-Id` metadata (generates a random UUID when absent) and
 * copies it onto every message the handler produces that has none (the Router does so before it
 * publishes them, from `msg.context.correlationId`). The outermost middleware, so
 * that even a DLQ copy and every log line of the stack carry it. **Never a dedup key** (spec §6).
 */
export function correlationId(): Middleware {
  return namedMiddleware(
    "correlationId",
    (next) => async (msg) => {
      const id = tag(msg);
      const produced = await next(msg);
      if (produced) for (const p of produced) if (!p.metadata[CORRELATION_ID_KEY]) p.metadata[CORRELATION_ID_KEY] = id;
      return produced;
    },
    {
      // A Router batch: every message is tagged before the batch runs (a message the batch never
      // reaches keeps its id for its redelivery). Produced messages get it from the Router, which
      // publishes them inside the stack.
      batch: (_next, nextBatch) => (msgs, stop) => {
        for (const m of msgs) tag(m);
        return nextBatch(msgs, stop);
      },
    },
  );
}

/** The message's correlation id (generated and written to its metadata when absent), also put on its context. */
function tag(msg: Message): string {
  let id = msg.metadata[CORRELATION_ID_KEY];
  if (!id) {
    id = randomUUID();
    msg.metadata[CORRELATION_ID_KEY] = id;
  }
  // The Router publishes produced messages inside the stack, before this layer sees them.
  msg.context.correlationId = id;
  return id;
}
