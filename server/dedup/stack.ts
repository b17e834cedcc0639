import { correlationId } from "./correlation-id";
import { Deduplicator, type DeduplicatorOptions } from "./deduplicator";
import { InProgressError } from "./errors";
import type { StackEntry } from "./lint";
import type { Middleware } from "./message";
import { poisonQueue, type PoisonQueueOptions } from "./poison-queue";
import type { Publisher } from "./pubsub";
import { recoverer } from "./recoverer";
import { retry, type RetryOptions } from "./retry";

/** Options of {@link defaultStack}. */
export interface DefaultStackOptions {
  /** Publisher of the DLQ. Required. */
  dlqPublisher: Publisher;
  /** DLQ topic, e.g. `demo.events.dlq`. Required. */
  dlqTopic: string;
  /** Deduplicator options (repository required). */
  dedup: DeduplicatorOptions;
  /** Retry options. @default DEFAULT_RETRY_OPTIONS */
  retry?: RetryOptions;
  /**
   * Which errors the PoisonQueue sends to the DLQ.
   * @default every error except `InProgressError` (another consumer's run in progress is not a poison:
   * it is nacked and redelivered, and processed once the owner finishes or its lease expires)
   */
  poisonFilter?: PoisonQueueOptions["filter"];
}

/** Default `poisonFilter` of {@link defaultStack}. */
export const notInProgress = (err: Error): boolean => !(err instanceof InProgressError);

/**
 * The spec's stack, outermost first. Why each sits where it does:
 * 1. `correlationId` — outermost, so everything inside (DLQ copies, produced messages, logs) carries it.
 * 2. `recoverer` — turns any thrown value into an Error with a stack before PoisonQueue reads its message.
 * 3. `poisonQueue` — outside Retry (watermill#645): it sees only the error that survived every
 *    retry, and sends the message to the DLQ once, not once per attempt.
 * 4. `retry` — outside the Deduplicator, so each attempt re-checks the key: a failed attempt
 *    released its key, so the retry runs the handler (spec §10); a concurrent owner's success turns
 *    the next attempt into a swallowed duplicate.
 * 5. `deduplicator` — last, right before the handler: only a handler success marks the key done,
 *    so a message that went to the DLQ is not "done" and its replay is processed (the opposite order
 *    is anti-pattern §9.6).
 * Returns the array for `Router.use(...)` or a handler's `middleware`; the Deduplicator's batch hook
 * is on the last element.
 */
export function defaultStack(options: DefaultStackOptions): Middleware[] {
  return [
    correlationId(),
    recoverer(),
    poisonQueue(options.dlqPublisher, options.dlqTopic, {
      filter: options.poisonFilter ?? notInProgress,
      registry: options.dedup.registry,
      service: options.dedup.service,
    }),
    retry(options.retry),
    new Deduplicator(options.dedup).middleware,
  ];
}

/** The stack names of a middleware array (for lint): each middleware's `middlewareName`, or "custom". */
export function describeStack(middleware: readonly Middleware[]): StackEntry[] {
  return middleware.map((m) => m.middlewareName ?? "custom");
}
