/**
 * Building blocks shared by the live demo and the workshop scenarios: the notification handler
 * (idempotent by design, spec §5, with switchable faults), the middleware stack in the spec's
 * order or a scenario's wrong one, and a replica (one Router + one group subscriber per handler).
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  type DeduplicatorOptions,
  NonRetryableError,
  payloadText,
  type Handler,
  type Message,
  type Middleware,
  type Publisher,
  type DedupRepository,
  type RetryOptions,
  Router,
  type RouterErrorEvent,
  defaultStack,
  type SideEffect,
} from "@/server/dedup";
import { EVENT_TYPE_KEY } from "@/names/dedup";
import { type StackOrder } from "@/names/stack";
import { type TtlClass } from "@/names/keys";
import type { SideEffectStore } from "./side-effects";
import type { GroupSubscriber, ReplicaSubscriberOptions, Transport } from "@/server/transport";
import type { UnreadableRecord } from "@/server/transport/partition-pump";

/** Switchable behaviour of a notification handler. */
export interface HandlerBehaviour {
  /** The handler's own idempotency (spec §5). Off = anti-pattern: every call pushes. */
  idempotent: boolean;
  /**
   * Pass the event id to the push provider as its idempotency key: the third line of defence,
   * which absorbs the re-send after a crash between the push and its record's COMMIT (the window
   * `idempotent` alone leaves open). Off = every call to the provider delivers.
   * @default idempotent
   */
  providerKey?: boolean;
  /** Fail before the push (the provider timed out: nothing was sent). */
  failBeforePush?: (msg: Message, attempt: number) => boolean;
  /** Fail after the push (a later step failed: the push went out). */
  failAfterPush?: (msg: Message, attempt: number) => boolean;
  /** Simulated work per call, ms. */
  workMs?: number;
}

/** Thrown by the fault injection; retryable. */
export class InjectedFault extends Error {
  constructor(what: string) {
    super(`${what} (injected fault)`);
    this.name = "InjectedFault";
  }
}

/**
 * A notification handler: parses the JSON payload (invalid JSON → `NonRetryableError`, straight
 * to the DLQ), then sends one push per event id through `store` — only when its row is new
 * (`INSERT … ON CONFLICT (event_id) DO NOTHING` in the same transaction), unless `behaviour.idempotent`
 * is off; and, unless `behaviour.providerKey` is off, with the event id as the provider's
 * idempotency key, so a re-send after a crash before that COMMIT delivers nothing. `behaviour` is read at every call, so the live demo can switch faults on and off.
 */
export function notificationHandler(name: string, store: SideEffectStore, behaviour: () => HandlerBehaviour): Handler {
  return async (msg) => {
    try {
      JSON.parse(payloadText(msg));
    } catch (e) {
      throw new NonRetryableError(`invalid JSON payload: ${(e as Error).message}`, { cause: e });
    }
    const b = behaviour();
    const attempt = msg.context.attempt ?? 1;
    const providerKey = b.providerKey ?? b.idempotent;
    if (b.workMs) await sleep(b.workMs);
    const push = async () => {
      if (b.failBeforePush?.(msg, attempt)) throw new InjectedFault("push provider timed out before sending");
      await store.push(name, msg.uuid, providerKey ? { idempotencyKey: msg.uuid } : {});
      if (b.failAfterPush?.(msg, attempt)) throw new InjectedFault("push sent, then saving the notification failed");
    };
    if (b.idempotent) await store.sendOnce(name, msg.uuid, push);
    else await push();
  };
}

/** A stack: the spec's order (§2, §10) or the dedup-before-retry anti-pattern. */
export interface StackSpec {
  /**
   * `"spec"`: correlationId, recoverer, poisonQueue, retry, deduplicator.
   * `"dedup-outside"`: correlationId, recoverer, deduplicator, poisonQueue, retry (anti-pattern §9.6).
   */
  order: StackOrder;
  retry: RetryOptions;
  /** Deduplicator options; null = no Deduplicator (anti-pattern §9.1). */
  dedup: DeduplicatorOptions | null;
  /** Time limit of one handler attempt (`defaultStack`'s `timeoutMs`). @default none */
  timeoutMs?: number | null;
  /** The handlers' TTL class, declared in `dedup_handler_info` (`defaultStack`'s `ttlClass`). @default none declared */
  ttlClass?: TtlClass | null;
  /** The handlers' kinds of side effect, declared in `dedup_handler_info` (`defaultStack`'s `sideEffects`). @default none declared */
  sideEffects?: readonly SideEffect[] | null;
}

/**
 * Middleware a caller adds to the spec's stack without this module knowing it (the workshop's
 * probes): `defaultStack`'s `outermost` and `beforeDedup` slots, and a wrapper of the DLQ publisher.
 */
export interface StackExtras {
  /** Outside everything: sees every delivery. */
  outermost?: Middleware[];
  /** Right outside the Deduplicator: sees every attempt. */
  beforeDedup?: Middleware[];
  /** Wraps the DLQ publisher: sees every message that reaches the DLQ. */
  wrapDlqPublisher?: (p: Publisher) => Publisher;
}

/** The library's `defaultStack` for `spec`, with a caller's {@link StackExtras} in its slots. */
export function buildStack(
  spec: StackSpec,
  dlqPublisher: Publisher,
  dlqTopic: string,
  extras: StackExtras = {},
): Middleware[] {
  return defaultStack({
    ...spec,
    dlqPublisher: extras.wrapDlqPublisher ? extras.wrapDlqPublisher(dlqPublisher) : dlqPublisher,
    dlqTopic,
    outermost: extras.outermost,
    beforeDedup: extras.beforeDedup,
  });
}

/**
 * A handler's `accept` predicate that takes only messages whose `Event-Type` is `type`: each
 * handler has its own consumer group on the shared topic. The Router applies it before the
 * Deduplicator's batch pre-claim, so a handler claims keys only for its own event type.
 */
export function acceptEventType(type: string): (msg: Message) => boolean {
  return (msg) => msg.metadata[EVENT_TYPE_KEY] === type;
}

/** One handler of a replica. */
export interface ServiceHandler {
  name: string;
  topic: string;
  groupId: string;
  dlqTopic: string;
  handler: Handler;
  middleware: Middleware[];
  /** Which messages the handler takes, decided before its stack and pre-claim (`HandlerConfig.accept`). @default every message */
  accept?: (msg: Message) => boolean;
  /**
   * Whether this handler's subscriber owns an unreadable record (sends it to the DLQ and reports
   * it) or just skips it — when several groups read one topic, exactly one should own each.
   * @default always
   */
  claimsUnreadable?: (rec: UnreadableRecord) => boolean;
}

/** Options of {@link Replica}. */
export interface ReplicaOptions {
  transport: Transport;
  /** Publisher of DLQ copies of unreadable records. @default transport.publisher */
  publisher?: Publisher;
  /**
   * Where each unreadable record's one DLQ copy is remembered (a record read again before its
   * commit gets no second copy; `SubscriberOptions.dlq.repository`). @default none: one copy per read
   */
  dlqRepository?: DedupRepository;
  replica: string;
  handlers: readonly ServiceHandler[];
  /** Subscriber knobs (commit interval, crash hook, chunk size). */
  subscriber?: Omit<ReplicaSubscriberOptions, "groupId" | "replica" | "dlq">;
  /** Nack reports. @default silent (the timeline and metrics show them) */
  onError?: (e: RouterErrorEvent) => void;
}

/** One consumer replica: a Router with one group subscriber per handler. */
export class Replica {
  readonly router: Router;
  readonly subscribers: GroupSubscriber[] = [];
  private runP: Promise<void> | null = null;

  constructor(readonly o: ReplicaOptions) {
    this.router = new Router({ onError: o.onError ?? (() => undefined), closeTimeoutMs: 10_000 });
    for (const h of o.handlers) {
      const sub = o.transport.subscriber({
        ...o.subscriber,
        groupId: h.groupId,
        replica: o.replica,
        dlq: { publisher: o.publisher ?? o.transport.publisher, topic: h.dlqTopic, repository: o.dlqRepository },
        claimsUnreadable: h.claimsUnreadable,
        handler: h.name,
      });
      this.subscribers.push(sub);
      this.router.addHandler({
        name: h.name,
        topic: h.topic,
        subscriber: sub,
        handler: h.handler,
        middleware: h.middleware,
        accept: h.accept,
      });
    }
  }

  get name(): string {
    return this.o.replica;
  }

  /** True once a `beforeCommit` crash hook fired. */
  get crashed(): boolean {
    return this.subscribers.some((s) => s.crashed);
  }

  /** Subscribes every handler; resolves once all joined their groups. */
  async start(): Promise<void> {
    this.runP = this.router.run();
    this.runP.catch(() => undefined);
    await this.router.running;
  }

  /** Resolves when every subscription closed (after stop or a crash). */
  get done(): Promise<void> {
    return this.runP ?? Promise.resolve();
  }

  /** Graceful stop: finish in-flight work, commit, leave. */
  async stop(): Promise<void> {
    await this.router.close();
    await Promise.all(this.subscribers.map((s) => s.close()));
  }
}
