/**
 * The Router: runs handlers, each subscribed to a topic, through middleware in order (the
 * middleware added first is the outermost, as in Watermill's router.go), over a Subscriber /
 * Publisher pair.
 */
import type { Middleware } from "../message";
import type { MessageSink, Subscription } from "../pubsub";
import { RouterDelivery } from "./delivery";
import { DEFAULT_ROUTER_OPTIONS, type HandlerConfig, type RouterOptions } from "./router-options";
import { composeStack, registerWith } from "./router-stack";

export * from "./router-options";

/**
 * Runs handlers. Every delivery ends in exactly one `ack` or `nack`; nothing escapes as an
 * unhandled rejection (a throwing handler, middleware, hook or publish becomes a nack reported to
 * `onError`).
 *
 * ## Batches and the Deduplicator's pre-claim
 * `sink(name).deliverBatch(msgs)` (what the Kafka `eachBatch` transport calls) first calls the
 * `prepareBatch(msgs)` hook of every middleware that has one (Router-level, then handler-level), once
 * for the whole batch — the Deduplicator claims all keys in ONE pipelined round trip and remembers
 * each message's reply. Then it runs the messages in order — through the stack's batch form when
 * every middleware has one (`Middleware.batch`: each layer once per batch, a failed message handled
 * by every layer before the next runs), else through the per-message stack one by one: the
 * Deduplicator uses the remembered reply instead of a round trip, unless it is older than a safe
 * fraction of the lease (then it re-checks). It stops at the first nack and hands the messages that
 * never ran to each preparation's `discard`, which releases their pre-claims so their redelivery is
 * not blocked for a lease, then starts each preparation's `settle` (the Deduplicator's `done` marks,
 * sent without a per-message wait) and resolves **without waiting for it**: the transport's next
 * batch (its pre-claim, its handlers) overlaps the marks, and the transport awaits `sink.flush()` —
 * every settle started so far — before it commits (the delivery contract, `pubsub.ts` item 3). The
 * marks are sent before `deliverBatch` resolves, so on one Redis connection a copy of a marked key in
 * the next batch is claimed after its mark and is swallowed. A failing hook only costs the
 * shortcut: the per-message path claims.
 *
 * ## Routing before the pre-claim
 * A handler's `accept(msg)` is applied first, to single deliveries and batches alike: only the
 * messages it takes reach the batch hooks and the stack; the others are acked untouched (no key
 * claimed, nothing counted). Outcomes are still returned in batch order, as a prefix.
 *
 * ## Registration
 * `addHandler` (and `use`, for handlers added before) calls each middleware's `onRegister` hook,
 * where the Deduplicator and the PoisonQueue create the handler's zero series.
 */
export class Router {
  private readonly opts: Required<RouterOptions>;
  private readonly global: Middleware[] = [];
  private readonly handlers = new Map<string, HandlerConfig>();
  private readonly sinks = new Map<string, MessageSink>();
  private readonly controller = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  private started = false;
  private runPromise: Promise<void> | null = null;
  private readonly delivery: RouterDelivery;
  private markRunning!: () => void;
  private failRunning!: (e: unknown) => void;
  /** Resolves once every handler is subscribed; rejects if a subscription failed. */
  readonly running: Promise<void>;

  constructor(options: RouterOptions = {}) {
    this.opts = { ...DEFAULT_ROUTER_OPTIONS, ...options };
    if (!(this.opts.closeTimeoutMs >= 0 && this.opts.closeTimeoutMs <= 600_000)) {
      throw new RangeError("Router: closeTimeoutMs must be in [0, 600000]");
    }
    this.delivery = new RouterDelivery(this.opts, this.controller.signal, (p) => this.track(p));
    this.running = new Promise<void>((resolve, reject) => {
      this.markRunning = resolve;
      this.failRunning = reject;
    });
    this.running.catch(() => undefined);
  }

  /** Adds Router-level middleware (outside every handler's own). First added = outermost. Before `run`. */
  use(...middleware: Middleware[]): this {
    if (this.started || this.sinks.size > 0)
      throw new Error("Router.use: add middleware before run() and before sink()");
    for (const h of this.handlers.values()) registerWith(middleware, h);
    this.global.push(...middleware);
    return this;
  }

  /** Adds a handler. Before `run`. */
  addHandler(config: HandlerConfig): this {
    if (this.started) throw new Error("Router.addHandler: add handlers before run()");
    if (!config.name) throw new RangeError("Router.addHandler: name must be non-empty");
    if (!config.topic) throw new RangeError(`Router.addHandler(${config.name}): topic must be non-empty`);
    if (this.handlers.has(config.name))
      throw new RangeError(`Router.addHandler: duplicate handler name ${config.name}`);
    if ((config.publisher === undefined) !== (config.publishTopic === undefined)) {
      throw new RangeError(`Router.addHandler(${config.name}): give both publisher and publishTopic, or neither`);
    }
    if (config.accept !== undefined && typeof config.accept !== "function")
      throw new RangeError(`Router.addHandler(${config.name}): accept must be a function (msg) => boolean`);
    // The handler's zero series (processed × result, poisoned × reason class, …) exist from now on.
    registerWith([...this.global, ...(config.middleware ?? [])], config);
    this.handlers.set(config.name, config);
    return this;
  }

  /** Names of the handlers, in the order added. */
  handlerNames(): string[] {
    return [...this.handlers.keys()];
  }

  /**
   * The entry points of one handler (what `run` subscribes). Exposed for transports driven from
   * outside and for tests.
   */
  sink(handlerName: string): MessageSink {
    const existing = this.sinks.get(handlerName);
    if (existing) return existing;
    const config = this.handlers.get(handlerName);
    if (!config) throw new RangeError(`Router.sink: no handler named ${handlerName}`);
    const middleware = [...this.global, ...(config.middleware ?? [])];
    const { handler: composed, batch } = composeStack(config, middleware);
    const hooks = middleware.filter((m) => typeof m.prepareBatch === "function");
    // Settles started by this sink's batches and not finished yet (see `flush`).
    const settling = new Set<Promise<void>>();
    const d = this.delivery;
    const s: MessageSink = {
      deliver: (msg) => this.track(d.deliverTaken(config, composed, msg)),
      deliverBatch: (msgs) =>
        this.track(
          config.accept
            ? d.deliverBatchTaken(config, { composed, batch, hooks, settling }, msgs)
            : d.deliverBatch(config, { composed, batch, hooks, settling }, msgs),
        ),
      flush: async () => {
        if (settling.size > 0) await Promise.all([...settling]);
      },
    };
    this.sinks.set(handlerName, s);
    return s;
  }

  /**
   * Subscribes every handler and resolves when all subscriptions have closed (after `close()` or
   * when `signal` aborts). Rejects if a subscription could not be established.
   */
  run(signal?: AbortSignal): Promise<void> {
    if (this.runPromise) return this.runPromise;
    this.started = true;
    if (signal) {
      if (signal.aborted) this.controller.abort();
      else signal.addEventListener("abort", () => this.controller.abort(), { once: true });
    }
    this.runPromise = (async () => {
      let subs: Subscription[];
      try {
        subs = await Promise.all(
          [...this.handlers.values()].map((h) =>
            h.subscriber.subscribe(h.topic, this.sink(h.name), this.controller.signal),
          ),
        );
      } catch (e) {
        this.controller.abort();
        this.failRunning(e);
        throw e;
      }
      this.markRunning();
      await Promise.all(subs.map((s) => s.closed));
    })();
    return this.runPromise;
  }

  /** Stops consuming and waits (up to `closeTimeoutMs`) for in-flight deliveries. Idempotent. */
  async close(): Promise<void> {
    this.controller.abort();
    const pending = Promise.allSettled([...this.inFlight, ...(this.runPromise ? [this.runPromise] : [])]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pending, new Promise<void>((r) => (timer = setTimeout(r, this.opts.closeTimeoutMs)))]);
    clearTimeout(timer);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }
}
