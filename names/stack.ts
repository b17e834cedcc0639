/**
 * The middleware stack's order (spec §2, §10), written once: `defaultStack` builds it and the lint
 * checks a handler's stack against it.
 * **Imports nothing**, so the library, the dashboard and the browser read the same names.
 */

/**
 * The spec's stack, outermost first — the ONE ordered declaration: `defaultStack` builds its
 * middleware in this order and the lint checks a handler's stack against it.
 */
export const STACK_ORDER = ["correlationId", "recoverer", "poisonQueue", "retry", "deduplicator"] as const;

/** A middleware name of the spec's stack. */
export type StackName = (typeof STACK_ORDER)[number];

/**
 * `"spec"`: {@link STACK_ORDER}. `"dedup-outside"`: the Deduplicator right after the recoverer,
 * outside PoisonQueue and Retry — anti-pattern §9.6, kept for the workshop to demonstrate the loss.
 */
export type StackOrder = "spec" | "dedup-outside";

/** The stack names of `order`, outermost first. */
export function stackOrder(order: StackOrder): readonly StackName[] {
  if (order === "spec") return STACK_ORDER;
  const rest = STACK_ORDER.filter((n) => n !== "deduplicator");
  const at = rest.indexOf("recoverer") + 1;
  return [...rest.slice(0, at), "deduplicator", ...rest.slice(at)];
}

/**
 * The stack name of the Kafka-transactions mode's self-description middleware
 * (`KafkaSubscriber.selfDescribe`): it stands where the Deduplicator would, and a transactions-mode
 * handler has no Deduplicator.
 */
export const TRANSACTIONS_STACK_NAME = "kafkaTransactions";
