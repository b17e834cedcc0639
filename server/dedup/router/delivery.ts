/**
 * How a Router hands deliveries to one handler's stack: a fresh context per delivery, the handler's
 * `accept`, single deliveries and batches (the batch hooks, the batch form or the per-message stack,
 * releasing what never ran, then the settles); every failure reported to `onError`, never thrown.
 */
import { toError } from "../errors";
import type { BatchHandler, BatchPreparation, Handler, Message, Middleware, Outcome } from "../message";
import type { HandlerConfig, RouterOptions } from "./router-options";
import { runBatchForm, startSettles, takenOutcomes } from "./router-stack";

/** What a sink's batches run through: the per-message stack, its batch form (or null), the batch hooks, and the settles in flight. */
export interface SinkStack {
  composed: Handler;
  batch: BatchHandler | null;
  hooks: Middleware[];
  settling: Set<Promise<void>>;
}

/** The delivery side of one Router (see `Router`): its `onError`, its stop signal, its in-flight tracking. */
export class RouterDelivery {
  constructor(
    private readonly opts: Required<RouterOptions>,
    private readonly signal: AbortSignal,
    private readonly track: (p: Promise<void>) => Promise<void>,
  ) {}

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
  async deliverTaken(config: HandlerConfig, composed: Handler, msg: Message): Promise<Outcome> {
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
  async deliverBatchTaken(config: HandlerConfig, stack: SinkStack, msgs: readonly Message[]): Promise<Outcome[]> {
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

  async deliverBatch(
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
      outcomes = await runBatchForm(batch, msgs, this.signal, (e, uuid) => this.report(config, e, uuid));
    else {
      outcomes = [];
      for (const msg of msgs) {
        if (msg.signal.aborted || this.signal.aborted) break;
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
