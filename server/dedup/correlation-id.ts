import { randomUUID } from "node:crypto";
import { namedMiddleware, type Middleware } from "./message";
import { CORRELATION_ID_KEY } from "../../names/dedup";

/**
 * Ensures every message carries `Correlation-Id` metadata (generates a random UUID when absent) and
 * copies it onto every message the handler produces that has none (the Router does so before it
 * publishes them, from `msg.context.correlationId`). The outermost middleware, so
 * that even a DLQ copy and every log line of the stack carry it. **Never a dedup key** (spec §6).
 */
export function correlationId(): Middleware {
  return namedMiddleware("correlationId", (next) => async (msg) => {
    let id = msg.metadata[CORRELATION_ID_KEY];
    if (!id) {
      id = randomUUID();
      msg.metadata[CORRELATION_ID_KEY] = id;
    }
    // The Router publishes produced messages inside the stack, before this layer sees them.
    msg.context.correlationId = id;
    const produced = await next(msg);
    if (produced) for (const p of produced) if (!p.metadata[CORRELATION_ID_KEY]) p.metadata[CORRELATION_ID_KEY] = id;
    return produced;
  });
}
