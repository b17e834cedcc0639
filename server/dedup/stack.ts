import { correlationId } from "./middleware/correlation-id";
import { handlerTimer } from "./middleware/handler-timer";
import { timeout } from "./middleware/timeout";
import { Deduplicator } from "./deduplicator/deduplicator";
import type { DeduplicatorOptions } from "./deduplicator/deduplicator-options";
import { InProgressError } from "./errors";
import { stackOrder, type StackName, type StackOrder } from "../../names/stack";
import { type TtlClass } from "../../names/keys";
import { selfDescribe, stackInfoOf } from "./deduplicator/handler-info";
import type { SideEffect, StackEntry } from "./lint";
import type { Middleware } from "./message";
import { poisonQueue, type PoisonQueueOptions } from "./middleware/poison-queue";
import type { Publisher } from "./pubsub";
import { recoverer } from "./middleware/recoverer";
import { retry, type RetryOptions } from "./middleware/retry";

/** Options of {@link defaultStack}. */
export interface DefaultStackOptions {
  /** Publisher of the DLQ. Required. */
  dlqPublisher: Publisher;
  /** DLQ topic, e.g. `demo.events.dlq`. Required. */
  dlqTopic: string;
  /**
   * Deduplicator options (repository required). `null` leaves the Deduplicator out — anti-pattern
   * §9.1, for the workshop to show what it costs; the lint reports it as `no-deduplicator`.
   */
  dedup: DeduplicatorOptions | null;
  /** Retry options. @default DEFAULT_RETRY_OPTIONS */
  retry?: RetryOptions;
  /**
   * Which errors the PoisonQueue sends to the DLQ.
   * @default every error except `InProgressError` (another consumer's run in progress is not a poison:
   * it is nacked and redelivered, and processed once the owner finishes or its lease expires)
   */
  poisonFilter?: PoisonQueueOptions["filter"];
  /**
   * Where the PoisonQueue remembers the one DLQ copy per poisoned delivery position (its `guard`):
   * a record read again after its copy was published but before its offset was committed (a
   * rebalance, a restart) gets no second copy. `null`: every failure publishes a copy.
   * @default the Deduplicator's repository (with its `timeoutMs`); none with `dedup: null`
   */
  dlqGuard?: PoisonQueueOptions["guard"] | null;
  /**
   * `"spec"` ({@link STACK_ORDER}) or `"dedup-outside"`: the Deduplicator outside PoisonQueue and
   * Retry, anti-pattern §9.6, for the workshop to demonstrate the loss (see `stackOrder`).
   * @default "spec"
   */
  order?: StackOrder;
  /**
   * Time limit of one handler attempt, ms: a `timeout` inside the Deduplicator, so a slow attempt
   * fails (and releases its key) before its lease expires. Keep it below `dedup.leaseMs`; the lint
   * warns when a handler has none or one ≥ its lease. See `timeout` for what it cannot cancel.
   * @default none
   */
  timeoutMs?: number | null;
  /** Middleware put outside the whole stack, outermost first (e.g. a probe that sees each delivery). @default none */
  outermost?: readonly Middleware[];
  /**
   * Middleware put right before (outside) the Deduplicator, wherever `order` places it — with
   * `dedup: null`, where it would be (e.g. a probe that sees each attempt). @default none
   */
  beforeDedup?: readonly Middleware[];
  /**
   * The class of the handlers' messages (spec §3), declared in `dedup_handler_info`'s `ttl_class`
   * (docs/CONTRACT.md). @default none declared (a dashboard infers it from the window and says so)
   */
  ttlClass?: TtlClass | null;
  /** The handlers' consumer group, declared in `dedup_handler_info`'s `group`. @default `<service>.<handler>` */
  group?: string | null;
  /**
   * The handlers' kinds of side effect (`postgres`, `kafka`, `external`; `[]` for none), declared in
   * `dedup_handler_info`'s `side_effects`, so a dashboard in another process runs the effect rules
   * (`db-side-effect-without-inbox`, `kafka-output-without-transactions`).
   * @default none declared (the dashboard says the effect rules are not known)
   */
  sideEffects?: readonly SideEffect[] | null;
}

/** Default `poisonFilter` of {@link defaultStack}. */
export const notInProgress = (err: Error): boolean => !(err instanceof InProgressError);

/**
 * How each name of {@link STACK_ORDER} is built (null = left out). Why each sits where it does:
 * 1. `correlationId` — outermost, so everything inside (DLQ copies, produced messages, logs) carries it.
 * 2. `recoverer` — turns any thrown value into an Error with a stack before PoisonQueue reads its message.
 * 3. `poisonQueue` — outside Retry (watermill#645): it sees only the error that survived every
 *    retry, and sends the message to the DLQ once, not once per attempt — and once per delivery
 *    position, guarded on the Deduplicator's repository (`dlqGuard`). It counts
 *    `messages_poisoned_total` on the Deduplicator's registry.
 * 4. `retry` — outside the Deduplicator, so each attempt re-checks the key: a failed attempt
 *    released its key, so the retry runs the handler (spec §10); a concurrent owner's success turns
 *    the next attempt into a swallowed duplicate.
 * 5. `deduplicator` — last of the spec's five, right before the handler: only a handler success
 *    marks the key done, so a message that went to the DLQ is not "done" and its replay is
 *    processed (the opposite order is anti-pattern §9.6).
 *
 * Inside them all, not part of the spec's order: `timeout` (with the `timeoutMs` option), which
 * bounds one attempt below the lease, then `handlerTimer` (when the Deduplicator has a registry),
 * which times the handler itself per attempt (`handler_execution_time_seconds`).
 */
const BUILD: { readonly [N in StackName]: (o: DefaultStackOptions) => Middleware | null } = {
  correlationId: () => correlationId(),
  recoverer: () => recoverer(),
  poisonQueue: (o) =>
    poisonQueue(o.dlqPublisher, o.dlqTopic, {
      filter: o.poisonFilter ?? notInProgress,
      registry: o.dedup?.registry,
      service: o.dedup?.service,
      guard: o.dlqGuard === undefined ? o.dedup?.repository : (o.dlqGuard ?? undefined),
      guardTimeoutMs: o.dedup?.timeoutMs,
    }),
  retry: (o) => retry(o.retry),
  deduplicator: (o) => (o.dedup ? new Deduplicator(o.dedup).middleware : null),
};

/**
 * The spec's stack, outermost first, in the order of {@link STACK_ORDER} (the one declaration the
 * lint checks against too): correlationId, recoverer, poisonQueue, retry, deduplicator — see
 * {@link BUILD} for why. Returns the array for `Router.use(...)` or a handler's `middleware`; the
 * Deduplicator's batch hook is on its element (the last one in the spec's order).
 */
export function defaultStack(options: DefaultStackOptions): Middleware[] {
  const out: Middleware[] = [...(options.outermost ?? [])];
  for (const name of stackOrder(options.order ?? "spec")) {
    if (name === "deduplicator" && options.beforeDedup) out.push(...options.beforeDedup);
    const m = BUILD[name](options);
    if (m) out.push(m);
  }
  // Inside the Deduplicator, whatever the order: it bounds one attempt of the handler.
  if (options.timeoutMs != null) out.push(timeout(options.timeoutMs));
  // Innermost, whatever the order: it times the handler alone, once per attempt.
  const registry = options.dedup?.registry;
  if (registry) out.push(handlerTimer({ registry, service: options.dedup?.service }));
  // Each handler it serves declares itself (dedup_handler_info), so a dashboard in another process can lint it.
  if (registry && options.dedup)
    selfDescribe(
      out,
      registry,
      stackInfoOf(options.dedup, {
        timeoutMs: options.timeoutMs ?? null,
        ttlClass: options.ttlClass ?? null,
        group: options.group ?? null,
        stack: describeStack(out),
        sideEffects: options.sideEffects ?? null,
      }),
    );
  return out;
}

/** The stack names of a middleware array (for lint): each middleware's `middlewareName`, or "custom". */
export function describeStack(middleware: readonly Middleware[]): StackEntry[] {
  return middleware.map((m) => m.middlewareName ?? "custom");
}
