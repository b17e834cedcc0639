/**
 * The Router: runs handlers, each subscribed to a topic, through middleware in order (the
 * middleware added first is the outermost, as in Watermill's router.go), over a Subscriber /
 * Publisher pair.
 */
import { toError } from "../errors";
import type { BatchHandler, BatchPreparation, Handler, Message, Middleware, Outcome } from "../message";
import type { MessageSink, Subscription } from "../pubsub";
import { DEFAULT_ROUTER_OPTIONS, type HandlerConfig, type RouterOptions } from "./router-options";
import { composeStack, registerWith, runBatchForm, startSettles, takenOutcomes } from "./router-stack";

export * from "./router-options";

/** What a sink's batches run through: the per-message stack, its batch form (or null), the batch hooks, and the settles in flight. */
interface SinkStack {
  composed: Handler;
  batch: BatchHandler | null;
  hooks: Middleware[];
  settling: Set<Promise<void>>;
}

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
  private markRunning!: () => void;
  private failRunning!: (e: unknown) => void;
  /** Resolves once every handler is subscribed; rejects if a subscription failed. */
  readonly running: Promise<void>;

  constructor(options: RouterOptions = {}) {
    this.opts = { ...DEFAULT_ROUTER_OPTIONS, ...options };
    if (!(this.opts.closeTimeoutMs >= 0 && this.opts.closeTimeoutMs <= 600_000)) {
      throw new RangeError("Router: closeTimeoutMs must be in [0, 600000]");
    }
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
    const s: MessageSink = {
      deliver: (msg) => this.track(this.deliverTaken(config, composed, msg)),
      deliverBatch: (msgs) =>
        this.track(
          config.accept
            ? this.deliverBatchTaken(config, { composed, batch, hooks, settling }, msgs)
            : this.deliverBatch(config, { composed, batch, hooks, settling }, msgs),
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

  /**
   * A fresh context per delivery (keeping the transport's fields): middleware state kept on the
   * context (the Deduplicator's per-delivery state) never leaks into a redelivery, even when a
   * transport hands the same Message object in again.
   */
  private prepare(config: HandlerConfig, msg: Message): void {
    const { topic, subscriber, partition, offset } = msg.context;
    msg.context = {
      handler: config.name,
      topic: topic ?? config.topic,
      subscriber: subscriber ?? config.subscriber.name,
      partition,
      offset,
    };
  }

  private report(config: HandlerConfig, error: unknown, uuid?: string): void {
    try {
      this.opts.onError({ handler: config.name, topic: config.topic, uuid, error: toError(error) });
    } catch {
      // A broken onError must not turn into an unhandled rejection.
    }
  }

  /** `config.accept` of a prepared message: true / false, or the error it threw (reported; the message is nacked). */
  private takes(config: HandlerConfig, msg: Message): boolean | Error {
    try {
      return config.accept!(msg) === true;
    } catch (e) {
      const err = toError(e);
      this.report(
        config,
        new Error(`accept() of handler ${config.name} threw: ${err.message}`, { cause: err }),
        msg.uuid,
      );
      return err;
    }
  }

  /** One delivery through `accept`: a message the handler does not take is acked untouched. */
  private async deliverTaken(config: HandlerConfig, composed: Handler, msg: Message): Promise<Outcome> {
    if (!config.accept) return this.deliverOne(config, composed, msg);
    this.prepare(config, msg);
    const t = this.takes(config, msg);
    if (t === false) return "ack";
    if (t instanceof Error) return "nack";
    return this.deliverOne(config, composed, msg, true);
  }

  /**
   * A batch through `accept`: only the messages the handler takes reach the batch hooks and the
   * stack; the outcomes are mapped back to the batch's order (a message it does not take is an
   * `ack`), still a prefix that ends at the first nack or at the first message that did not run.
   */
  private async deliverBatchTaken(
    config: HandlerConfig,
    stack: SinkStack,
    msgs: readonly Message[],
  ): Promise<Outcome[]> {
    const taken: Message[] = [];
    const verdicts: Array<boolean | Error> = [];
    for (const m of msgs) {
      this.prepare(config, m);
      const t = this.takes(config, m);
      verdicts.push(t);
      if (t instanceof Error) break; // the batch ends with this nack
      if (t) taken.push(m);
    }
    const ran = taken.length > 0 ? await this.deliverBatch(config, stack, taken, true) : [];
    return takenOutcomes(verdicts, ran);
  }

  private async deliverOne(config: HandlerConfig, composed: Handler, msg: Message, prepared = false): Promise<Outcome> {
    if (!prepared) this.prepare(config, msg);
    const settled: Array<(o: Outcome) => void> = [];
    msg.context.onSettled = (fn) => settled.push(fn);
    let outcome: Outcome;
    try {
      await composed(msg);
      outcome = "ack";
    } catch (e) {
      outcome = "nack";
      this.report(config, e, msg.uuid);
    }
    for (const fn of settled) {
      try {
        fn(outcome);
      } catch (e) {
        this.report(config, e, msg.uuid);
      }
    }
    return outcome;
  }

  private async deliverBatch(
    config: HandlerConfig,
    stack: SinkStack,
    msgs: readonly Message[],
    prepared = false,
  ): Promise<Outcome[]> {
    const { composed, batch, hooks, settling } = stack;
    if (!prepared) for (const m of msgs) this.prepare(config, m);
    const preparations: BatchPreparation[] = [];
    let hooksFailed = false;
    for (const hook of hooks) {
      try {
        preparations.push(await hook.prepareBatch!(msgs));
      } catch (e) {
        hooksFailed = true;
        this.report(config, e);
      }
    }
    let outcomes: Outcome[];
    // The batch form needs every hook's batch state (the Deduplicator counts its results there).
    if (batch && !hooksFailed)
      outcomes = await runBatchForm(batch, msgs, this.controller.signal, (e, uuid) => this.report(config, e, uuid));
    else {
      outcomes = [];
      for (const msg of msgs) {
        if (msg.signal.aborted || this.controller.signal.aborted) break;
        const o = await this.deliverOne(config, composed, msg, true);
        outcomes.push(o);
        if (o === "nack") break;
      }
    }
    const notRun = msgs.slice(outcomes.length);
    if (notRun.length > 0) {
      // Before resolving: the transport redelivers these next and must find their keys free.
      for (const p of preparations) {
        try {
          await p.discard(notRun);
        } catch (e) {
          this.report(config, e);
        }
      }
    }
    startSettles(
      preparations,
      settling,
      (e) => this.report(config, e),
      (p) => this.track(p),
    );
    return outcomes;
  }
}
