/**
 * The message model of the library: a Watermill-style `Message`, the `Handler` and `Middleware`
 * function types (the metadata keys are in `./names`).
 */

/**
 * Where a delivery came from and who handles it. The Router fills it before the middleware stack
 * runs; a transport may add `partition` / `offset`. Middleware reads it (PoisonQueue's metadata,
 * the Deduplicator's key prefix and metric labels) instead of Go's `context.Context` values.
 */
export interface DeliveryContext {
  /** Handler name (Router); part of the dedup key prefix `<service>:dedup:<handler>`. */
  handler?: string;
  /** Topic the message was consumed from. */
  topic?: string;
  /** Name of the subscriber (transport) that delivered it, e.g. `memory` or `kafka`. */
  subscriber?: string;
  /**
   * Kafka partition, when the transport has one. With `topic` and `offset` it is the delivery's
   * position, which the Deduplicator stores in the `done` value to tell a redelivery from a re-publish.
   */
  partition?: number;
  /** Kafka offset (a position, never a dedup key: spec §11); see `partition`. */
  offset?: string;
  /**
   * The delivery's correlation id, set by the `correlationId` middleware; the Router copies it onto
   * produced messages that have none before it publishes them.
   */
  correlationId?: string;
  /** Attempt number within this delivery, 1-based; set by `retry`. */
  attempt?: number;
  /**
   * Registers a callback that the Router calls once when this delivery is settled (acked or
   * nacked), after the whole stack returned. Absent when a handler is called without a Router.
   * The Deduplicator uses it to count `messages_processed_total{result="error"}` once per delivery.
   */
  onSettled?: (fn: (outcome: Outcome) => void) => void;
}

/** The end of one delivery: `ack` (commit / drop) or `nack` (redeliver). */
export type Outcome = "ack" | "nack";

/**
 * One message: an id that is unique per message (the dedup key, spec §2), string metadata, the
 * payload bytes, and an abort signal that fires when the transport gives the message up
 * (shutdown, rebalance). A handler that does long work should pass `signal` on.
 */
export interface Message {
  /** Event id: a ULID generated once by the publisher. Never regenerate it on re-publish. */
  readonly uuid: string;
  /** String → string metadata (Kafka headers other than the UUID header). */
  metadata: Record<string, string>;
  /** Payload bytes (`Buffer` is a `Uint8Array`). */
  readonly payload: Uint8Array;
  /**
   * The transport's record key (Kafka: the bytes that pick the partition, hence the per-key order),
   * when the record had one. A copy for re-publishing keeps it ({@link copyMessage}), so a DLQ copy
   * and a re-drive land on the key's partition; a publisher writes it as the record key.
   */
  readonly key?: Uint8Array;
  /** Fires when the transport gives this delivery up. */
  readonly signal: AbortSignal;
  /** Delivery information filled by the Router and the transport; empty on a fresh message. */
  context: DeliveryContext;
}

/** Options of {@link newMessage}. */
export interface NewMessageOptions {
  /** Metadata; copied, not aliased. @default {} */
  metadata?: Record<string, string>;
  /** Abort signal of the delivery. @default a signal that never aborts */
  signal?: AbortSignal;
}

const NEVER = new AbortController().signal;

/**
 * Creates a message. `payload` may be a string (encoded as UTF-8) or bytes.
 * @throws RangeError when `uuid` is empty.
 */
export function newMessage(uuid: string, payload: Uint8Array | string, options: NewMessageOptions = {}): Message {
  if (typeof uuid !== "string" || uuid === "")
    throw new RangeError("newMessage: uuid must be a non-empty string (use a ULID)");
  return {
    uuid,
    metadata: { ...(options.metadata ?? {}) },
    payload: typeof payload === "string" ? Buffer.from(payload, "utf8") : payload,
    signal: options.signal ?? NEVER,
    context: {},
  };
}

/**
 * A copy of `msg` for re-publishing (same uuid, copied metadata, same payload bytes and record key) with a fresh
 * context: what PoisonQueue sends to the DLQ and what a forwarder re-sends.
 */
export function copyMessage(msg: Message, signal?: AbortSignal): Message {
  return {
    uuid: msg.uuid,
    metadata: { ...msg.metadata },
    payload: msg.payload,
    ...(msg.key ? { key: msg.key } : {}),
    signal: signal ?? NEVER,
    context: {},
  };
}

/** Payload as UTF-8 text. */
export function payloadText(msg: Message): string {
  return Buffer.from(msg.payload.buffer, msg.payload.byteOffset, msg.payload.byteLength).toString("utf8");
}

/**
 * Handles one message. Resolves with nothing, or with messages for the Router to publish to the
 * handler's `publishTopic`. Rejects (throws) to signal failure: the stack decides between retry,
 * DLQ and nack.
 */
export type Handler = (msg: Message) => Promise<void | Message[]>;

/**
 * What running a batch's messages in order gave: `msgs[0 … ran-1]` succeeded; with `failure`,
 * `msgs[ran]` failed with `failure.error`; the messages after it (or, without `failure`, from `ran`
 * on, when the delivery was aborted) did not run.
 */
export interface BatchRun {
  ran: number;
  failure?: { error: unknown };
}

/**
 * Runs messages in order, one at a time, stopping before a message whose `signal` aborted or when
 * `stop` aborted (the Router closes), and at the first failure. Never rejects.
 */
export type BatchHandler = (msgs: readonly Message[], stop: AbortSignal) => Promise<BatchRun>;

/**
 * A middleware's batch form: given the per-message rest of the stack (`next`) and its batch form
 * (`nextBatch`), the batch handler of this layer. It must treat each message as the per-message
 * form would, in the same order (see {@link recoverEach}).
 */
export type BatchForm = (next: Handler, nextBatch: BatchHandler) => BatchHandler;

/**
 * Optional batch hook of a middleware, called by the Router's batch entry point before the
 * per-message stack runs (see `Router.sink(…).deliverBatch` in `./router`).
 */
export interface BatchHook {
  prepareBatch(msgs: readonly Message[]): Promise<BatchPreparation>;
}

/** What a middleware's batch hook returns: how to give back the work done for messages that never ran. */
export interface BatchPreparation {
  /**
   * Called by the Router with the messages of the batch whose per-message stack did not run
   * (the batch stopped at a nack or was aborted). The Deduplicator releases their pre-claims here
   * so that the redelivery is not blocked for a lease. Must not throw.
   */
  discard(notRun: readonly Message[]): Promise<void>;
  /**
   * Called by the Router after the last message of the batch ran, before `deliverBatch` resolves;
   * the Router does not wait for the returned promise but the transport does (`MessageSink.flush`)
   * before it commits any offset of the batch. The Deduplicator sends here, synchronously, the
   * `done` marks of the whole batch (N marks, one round trip) and resolves when they landed.
   * Must not throw.
   */
  settle?(): Promise<void>;
}

/** A handler as the Router registers it: what a middleware's `onRegister` hook is told. */
export interface HandlerRegistration {
  /** Handler name (the `handler` label and key prefix). */
  name: string;
  /** Topic the handler consumes (the `topic` label). */
  topic: string;
}

/**
 * Optional registration hook of a middleware: the Router calls it once per handler the middleware
 * serves, when the handler is added (`Router.addHandler`, or `Router.use` for handlers added
 * before). The Deduplicator and the PoisonQueue create the handler's zero series here.
 */
export interface RegistrationHook {
  onRegister(handler: HandlerRegistration): void;
}

/**
 * Wraps a handler. The middleware added first is the outermost (Watermill's order). A middleware
 * function may carry a `prepareBatch` hook ({@link BatchHook}) that the Router's batch entry point
 * calls once per batch, and an `onRegister` hook ({@link RegistrationHook}).
 */
export type Middleware = ((next: Handler) => Handler) &
  Partial<BatchHook> &
  Partial<RegistrationHook> & {
    /** Stack name for lint and dashboards (`correlationId`, `retry`, `deduplicator`, …). */
    middlewareName?: string;
    /**
     * The batch form ({@link BatchForm}): when every middleware of a handler has one, the Router
     * runs a batch through each layer once instead of through the whole stack once per message.
     * Without it (any custom middleware) the Router delivers the batch message by message.
     */
    batch?: BatchForm;
  };

/** Optional hooks of {@link namedMiddleware}. */
export type MiddlewareHooks = Partial<BatchHook> & Partial<RegistrationHook> & { batch?: BatchForm };

/** Attaches a stack name (and optional batch / registration hooks and batch form) to a middleware function. */
export function namedMiddleware(name: string, fn: (next: Handler) => Handler, hook?: MiddlewareHooks): Middleware {
  const m = fn as Middleware;
  m.middlewareName = name;
  if (hook?.prepareBatch) m.prepareBatch = hook.prepareBatch.bind(hook);
  if (hook?.onRegister) m.onRegister = hook.onRegister.bind(hook);
  if (hook?.batch) m.batch = hook.batch;
  return m;
}
