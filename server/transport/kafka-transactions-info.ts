/**
 * The self-description of a handler in the Kafka-transactions mode (kafka-transactions.ts): the
 * same `dedup_handler_info` gauge the Deduplicator and the inbox export (docs/CONTRACT.md §5), with
 * `mode="kafka-transactions"` and `marking="kafka-transaction"`, and without the labels that do not
 * apply to it (`TRANSACTIONS_DECLARATION.inapplicable`: no key, no window, no lease) — so a dashboard
 * lists and lints it like any other handler instead of not seeing it.
 */
import type { Registry } from "prom-client";
import { TRANSACTIONS_DECLARATION, type InfoSideEffect } from "@/names/contract";
import { TRANSACTIONS_STACK_NAME } from "@/names/stack";
import {
  DEFAULT_DEDUPLICATOR_OPTIONS,
  exportHandlerInfo,
  namedMiddleware,
  type HandlerInfo,
  type HandlerRegistration,
  type Middleware,
} from "@/server/dedup";

/** Options of `KafkaSubscriber.selfDescribe`. */
export interface TransactionsInfoOptions {
  /** Registry of `dedup_handler_info` (the one the app's other handlers export to). Required. */
  registry: Registry;
  /** Service name (the `service` label). @default "app" (the Deduplicator's default) */
  service?: string;
  /**
   * The handler's kinds of side effect: `["kafka"]` for one whose only effects are its produced
   * messages (what the mode makes once); add `postgres` or `external` for effects outside the
   * transaction, so the lint says they are not covered. @default not declared (the effect rules say "not known")
   */
  sideEffects?: readonly InfoSideEffect[];
  /** The time limit of one attempt, when the handler's stack has a `timeout`. @default none */
  timeoutMs?: number | null;
  /** The handler's middleware names, outermost first, for the `stack` label. @default ["kafkaTransactions"] */
  stack?: readonly string[];
}

/**
 * The `dedup_handler_info` of handler `h` consumed in transactions mode by consumer group `group`:
 * fail-closed (a failed send or commit aborts the chunk, which is read again: nothing passes
 * unchecked); prefix, window, class, lease, store and heartbeat left out — they do not apply.
 */
export function transactionsInfo(o: TransactionsInfoOptions, group: string, h: HandlerRegistration): HandlerInfo {
  return {
    service: o.service ?? DEFAULT_DEDUPLICATOR_OPTIONS.service,
    handler: h.name,
    topic: h.topic,
    group,
    prefix: null,
    ttlMs: null,
    ttlClass: null,
    leaseMs: null,
    timeoutMs: o.timeoutMs ?? null,
    marking: TRANSACTIONS_DECLARATION.marking,
    failureMode: "closed",
    stack: o.stack ?? [TRANSACTIONS_STACK_NAME],
    ...(o.sideEffects ? { sideEffects: o.sideEffects } : {}),
    mode: TRANSACTIONS_DECLARATION.mode,
  };
}

/**
 * A middleware that does nothing to deliveries (single or batched) and, for every handler it is
 * registered with, exports that handler's {@link transactionsInfo} on `o.registry`.
 */
export function transactionsInfoMiddleware(o: TransactionsInfoOptions, group: string): Middleware {
  return namedMiddleware(TRANSACTIONS_STACK_NAME, (next) => next, {
    onRegister: (h) => exportHandlerInfo(o.registry, transactionsInfo(o, group, h)),
    batch: (_next, nextBatch) => nextBatch,
  });
}
