import { InProgressError, NonRetryableError, PayloadConflictError, toError } from "../errors";
import { onFailure } from "../router/batch-run";
import { copyMessage, type Message, type Middleware } from "../message";
import {
  DEDUP_ERROR_REASONS,
  POISON_REASON_CLASS,
  POISON_REASON_CLASSES,
  poisonedMetadata,
  type DedupErrorReason,
  type PoisonReasonClass,
} from "../../../names/dedup";
import { poisonedCopyKey } from "../../../names/dlq";
import { dedupMetrics } from "../metrics/metrics";
import type { Publisher } from "../pubsub";
import { runOnce, type RunOnceStore } from "../repository/run-once";
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
  /** The `service` label of `messages_poisoned_total`, and part of the guard's key. @default "unknown" */
  service?: string;
  /**
   * Where the ONE DLQ copy per poisoned delivery is remembered (`defaultStack`: the Deduplicator's
   * repository). A delivery with a position (`context.partition` / `offset`: the Kafka and embedded
   * group subscribers) is published under `runOnce` on `poisonedCopyKey` (lease 30 s, kept 7 days,
   * as the transports' copy of a record without a UUID): when the same handler fails again on the
   * same record at the same position — read again after a rebalance or a restart before its offset
   * was committed — it is acked without a second copy and not counted again. A delivery without a
   * position is published every time it fails, as without a guard. **A store that fails or answers
   * after `guardTimeoutMs` lets the copy through (fail-open): a second copy then is possible.** A
   * deliberate re-read of the same positions within the 7 days (offsets reset) publishes no new copy.
   * @default none: every failure publishes a copy
   */
  guard?: RunOnceStore;
  /** Time limit of each guard store call, ms (1–60000). @default 500 */
  guardTimeoutMs?: number;
}

/** Defaults of {@link PoisonQueueOptions}. */
export const DEFAULT_POISON_QUEUE_OPTIONS = {
  filter: () => true,
  service: "unknown",
  guardTimeoutMs: 500,
} as const satisfies Omit<Required<PoisonQueueOptions>, "registry" | "guard">;

/**
 * The bounded class of a poisoning error, for the `reason_poisoned` metric label — always one of
 * {@link POISON_REASON_CLASSES} (seven values: the label's cardinality cannot grow with error names
 * or messages). The DLQ message's `reason_poisoned` metadata keeps the full error message.
 */
export function poisonReasonClass(err: Error): PoisonReasonClass {
  const own = (err as Error & { reason?: unknown }).reason;
  if (typeof own === "string" && (DEDUP_ERROR_REASONS as readonly string[]).includes(own))
    return own as DedupErrorReason;
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
 * message is not acked** (nothing is lost). With a `guard`, one copy per delivery position (see
 * {@link PoisonQueueOptions.guard}); a failure at a position whose copy another delivery is still
 * publishing is not acked either (redelivered, then acked without a copy once that one is done).
 * @throws RangeError when `topic` is empty or `guardTimeoutMs` out of range.
 */
export function poisonQueue(publisher: Publisher, topic: string, options: PoisonQueueOptions = {}): Middleware {
  if (typeof topic !== "string" || topic.trim() === "")
    throw new RangeError("poisonQueue: topic must be a non-empty DLQ topic name, e.g. demo.events.dlq");
  const { filter, registry, service, guard } = { ...DEFAULT_POISON_QUEUE_OPTIONS, ...options };
  // An explicit undefined (defaultStack passing a Deduplicator without `service` / `timeoutMs`) keeps the default.
  const guardTimeoutMs = options.guardTimeoutMs ?? DEFAULT_POISON_QUEUE_OPTIONS.guardTimeoutMs;
  const guardService = options.service ?? DEFAULT_POISON_QUEUE_OPTIONS.service;
  if (!(Number.isFinite(guardTimeoutMs) && guardTimeoutMs >= 1 && guardTimeoutMs <= 60_000))
    throw new RangeError("poisonQueue: guardTimeoutMs must be in [1, 60000] ms (one store call)");
  const poisoned = registry ? dedupMetrics(registry).poisoned : undefined;
  // The first DLQ'd message of each class must be an increase from 0 (see metrics.ts "Zero series").
  const onRegister = (h: { name: string; topic: string }) => {
    for (const reason_poisoned of POISON_REASON_CLASSES)
      poisoned?.inc({ service, topic: h.topic, handler: h.name, reason_poisoned }, 0);
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
    Object.assign(
      dlq.metadata,
      poisonedMetadata({ reason: err.message, reasonClass, topic: from, handler, subscriber }),
    );
    const { partition, offset } = msg.context;
    const key =
      guard && partition !== undefined && offset !== undefined
        ? poisonedCopyKey({ service: guardService, handler, topic: from, partition, offset, uuid: msg.uuid })
        : null;
    const send = () => publisher.publish(topic, dlq);
    let sent: "ran" | "done" = "ran";
    try {
      if (guard && key) sent = await runOnce(guard, key, send, { timeoutMs: guardTimeoutMs });
      else await send();
    } catch (pe) {
      if (pe instanceof InProgressError)
        throw new AggregateError(
          [err, pe],
          `poisonQueue: handler failed (${err.message}) and this delivery's DLQ copy (${key}) is being published by another read of it; not acked`,
        );
      throw new AggregateError(
        [err, toError(pe)],
        `poisonQueue: handler failed (${err.message}) and publishing to ${topic} failed too (${toError(pe).message}); not acked`,
      );
    }
    // One poisoning per delivery position: a copy already in the DLQ was counted when it was sent.
    if (sent === "ran") poisoned?.inc({ service, topic: from, handler, reason_poisoned: reasonClass });
  };
  return onFailure("poisonQueue", poison, { onRegister });
}
