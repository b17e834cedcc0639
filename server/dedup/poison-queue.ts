import { toError } from "./errors";
import {
  copyMessage,
  HANDLER_POISONED_KEY,
  namedMiddleware,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  type Middleware,
} from "./message";
import { dedupMetrics } from "./metrics";
import type { Publisher } from "./pubsub";
import type { Registry } from "prom-client";

/** Options of {@link poisonQueue}. */
export interface PoisonQueueOptions {
  /**
   * Which errors poison the message; others propagate (nack → redelivery).
   * @default every error
   */
  filter?: (err: Error) => boolean;
  /** Registry for `messages_poisoned_total`; none = not counted. @default undefined */
  registry?: Registry;
  /** The `service` label of `messages_poisoned_total`. @default "unknown" */
  service?: string;
}

/** Defaults of {@link PoisonQueueOptions}. */
export const DEFAULT_POISON_QUEUE_OPTIONS = {
  filter: () => true,
  service: "unknown",
} as const satisfies Omit<Required<PoisonQueueOptions>, "registry">;

/**
 * The bounded class of a poisoning error, for the `reason_poisoned` metric label: an error's own
 * `reason` (e.g. `DedupStoreError`'s `redis_timeout` / `redis_conn` / `marshal`), else its `name`
 * (`NonRetryableError`, `SyntaxError`, …), at most 48 characters of `[A-Za-z0-9_]`. The DLQ
 * message's `reason_poisoned` metadata keeps the full error message.
 */
export function poisonReasonClass(err: Error): string {
  const own = (err as Error & { reason?: unknown }).reason;
  const raw = typeof own === "string" && own !== "" ? own : err.name || "Error";
  return raw.replace(/[^A-Za-z0-9_]/g, "_").slice(0, 48) || "Error";
}

/**
 * On a handler error (after Retry gave up, since PoisonQueue sits outside Retry), publishes a copy
 * of the message (same uuid, payload, metadata) to `topic` with metadata `reason_poisoned`,
 * `topic_poisoned`, `handler_poisoned` and `subscriber_poisoned`, and acks.
 * **If that publish fails, the handler error and the publish error propagate together and the
 * message is not acked** (nothing is lost).
 * @throws RangeError when `topic` is empty.
 */
export function poisonQueue(publisher: Publisher, topic: string, options: PoisonQueueOptions = {}): Middleware {
  if (typeof topic !== "string" || topic.trim() === "") throw new RangeError("poisonQueue: topic must be a non-empty DLQ topic name, e.g. demo.events.dlq");
  const { filter, registry, service } = { ...DEFAULT_POISON_QUEUE_OPTIONS, ...options };
  const poisoned = registry ? dedupMetrics(registry).poisoned : undefined;
  return namedMiddleware("poisonQueue", (next) => async (msg) => {
    try {
      return await next(msg);
    } catch (e) {
      const err = toError(e);
      // A delivery aborted by shutdown or a crash was not poisoned: nack it so that it is redelivered.
      if (msg.signal.aborted) throw err;
      if (!filter(err)) throw err;
      const dlq = copyMessage(msg);
      dlq.metadata[REASON_POISONED_KEY] = err.message;
      dlq.metadata[TOPIC_POISONED_KEY] = msg.context.topic ?? "";
      dlq.metadata[HANDLER_POISONED_KEY] = msg.context.handler ?? "";
      dlq.metadata[SUBSCRIBER_POISONED_KEY] = msg.context.subscriber ?? "";
      try {
        await publisher.publish(topic, dlq);
      } catch (pe) {
        throw new AggregateError([err, toError(pe)], `poisonQueue: handler failed (${err.message}) and publishing to ${topic} failed too (${toError(pe).message}); not acked`);
      }
      poisoned?.inc({ service, topic: msg.context.topic ?? "", handler: msg.context.handler ?? "", reason_poisoned: poisonReasonClass(err) });
      return undefined;
    }
  });
}
