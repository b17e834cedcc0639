import { InProgressError, NonRetryableError, PayloadConflictError, toError } from "./errors";
import { onFailure } from "./batch-run";
import { copyMessage, type Message, type Middleware } from "./message";
import { DEDUP_ERROR_REASONS, POISON_REASON_CLASS, POISON_REASON_CLASSES, poisonedMetadata, type DedupErrorReason, type PoisonReasonClass } from "../../names/dedup";
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
 * The bounded class of a poisoning error, for the `reason_poisoned` metric label — always one of
 * {@link POISON_REASON_CLASSES} (seven values: the label's cardinality cannot grow with error names
 * or messages). The DLQ message's `reason_poisoned` metadata keeps the full error message.
 */
export function poisonReasonClass(err: Error): PoisonReasonClass {
  const own = (err as Error & { reason?: unknown }).reason;
  if (typeof own === "string" && (DEDUP_ERROR_REASONS as readonly string[]).includes(own)) return own as DedupErrorReason;
  if (err instanceof PayloadConflictError) return POISON_REASON_CLASS.payloadConflict;
  if (err instanceof NonRetryableError) return POISON_REASON_CLASS.nonRetryable;
  if (err instanceof InProgressError) return POISON_REASON_CLASS.inProgress;
  return POISON_REASON_CLASS.handlerError;
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
  // The first DLQ'd message of each class must be an increase from 0 (see metrics.ts "Zero series").
  const onRegister = (h: { name: string; topic: string }) => {
    for (const reason_poisoned of POISON_REASON_CLASSES) poisoned?.inc({ service, topic: h.topic, handler: h.name, reason_poisoned }, 0);
  };
  /** A failed delivery: sent to the DLQ (resolves: acked) or the error rethrown (nacked). */
  const poison = async (msg: Message, e: unknown): Promise<void> => {
    const err = toError(e);
    // A delivery aborted by shutdown or a crash was not poisoned: nack it so that it is redelivered.
    if (msg.signal.aborted) throw err;
    if (!filter(err)) throw err;
    const dlq = copyMessage(msg);
    const { topic: from = "", handler = "", subscriber = "" } = msg.context;
    const reasonClass = poisonReasonClass(err);
    Object.assign(dlq.metadata, poisonedMetadata({ reason: err.message, reasonClass, topic: from, handler, subscriber }));
    try {
      await publisher.publish(topic, dlq);
    } catch (pe) {
      throw new AggregateError([err, toError(pe)], `poisonQueue: handler failed (${err.message}) and publishing to ${topic} failed too (${toError(pe).message}); not acked`);
    }
    poisoned?.inc({ service, topic: from, handler, reason_poisoned: reasonClass });
  };
  return onFailure("poisonQueue", poison, { onRegister });
}
