/**
 * How the Router builds one handler's stack: the innermost publishing layer, the per-message
 * composition of the middleware, and its batch form when every middleware has one.
 */
import { eachInOrder } from "./batch-run";
import { NonRetryableError } from "../errors";
import { CORRELATION_ID_KEY } from "../../../names/dedup";
import type { BatchHandler, BatchPreparation, BatchRun, Handler, Message, Middleware, Outcome } from "../message";
import type { HandlerConfig } from "./router-options";

/**
 * The innermost layer of every handler's stack: the handler, then the publish of the messages it
 * returned. Inside the stack, so a delivery is done only once its outputs landed: a failed publish
 * fails the attempt like a handler error (the Deduplicator releases the key instead of marking it
 * `done`, Retry runs the handler again, after the last retry PoisonQueue sends the input to the DLQ).
 * The produced messages are still returned to the middleware, **after** they were published: a
 * middleware that changes them has no effect on what was sent. They carry the delivery's
 * correlation id (`msg.context.correlationId`, set by the `correlationId` middleware) unless they
 * have their own.
 */
export function publishing(config: HandlerConfig): Handler {
  const { handler, publisher, publishTopic, name } = config;
  return async (msg) => {
    const produced = await handler(msg);
    if (!produced || produced.length === 0) return produced;
    if (!publisher || !publishTopic) {
      throw new NonRetryableError(
        `handler ${name} returned ${produced.length} message(s) but has no publisher/publishTopic: give both in addHandler`,
      );
    }
    const id = msg.context.correlationId;
    if (id) for (const p of produced) if (!p.metadata[CORRELATION_ID_KEY]) p.metadata[CORRELATION_ID_KEY] = id;
    await publisher.publish(publishTopic, ...produced);
    return produced;
  };
}

/** Calls each middleware's `onRegister` hook for handler `h`. */
export function registerWith(middleware: readonly Middleware[], h: HandlerConfig): void {
  for (const m of middleware) m.onRegister?.({ name: h.name, topic: h.topic });
}

/** A handler's stack: per message, and as a batch when every middleware has a batch form (else null). */
export interface ComposedStack {
  handler: Handler;
  batch: BatchHandler | null;
}

/** Composes `middleware` (outermost first) around the handler's publishing layer, per message and as a batch. */
export function composeStack(config: HandlerConfig, middleware: readonly Middleware[]): ComposedStack {
  let handler: Handler = publishing(config);
  let batch = eachInOrder(handler) as BatchHandler | null;
  for (let i = middleware.length - 1; i >= 0; i--) {
    const m = middleware[i]!;
    const next = handler;
    handler = m(next);
    batch = batch && m.batch ? m.batch(next, batch) : null;
  }
  return { handler, batch };
}

/** A batch through a stack's batch form: the messages that ran are acked, a failed one is nacked and reported, as one by one. */
export async function runBatchForm(
  batch: BatchHandler,
  msgs: readonly Message[],
  stop: AbortSignal,
  report: (e: unknown, uuid?: string) => void,
): Promise<Outcome[]> {
  let r: BatchRun;
  try {
    r = await batch(msgs, stop);
  } catch (error) {
    r = { ran: 0, failure: { error } }; // a broken batch form: nothing is known to have run
  }
  const outcomes = new Array<Outcome>(r.ran).fill("ack");
  if (r.failure) {
    outcomes.push("nack");
    report(r.failure.error, msgs[r.ran]?.uuid);
  }
  return outcomes;
}

/**
 * The outcomes of a batch whose messages went through `accept` (`verdicts`: true = taken, false =
 * acked untouched, an Error = nacked) and whose taken ones gave `ran`, in the batch's order: a prefix
 * that ends at the first nack or at the first message that did not run.
 */
export function takenOutcomes(verdicts: ReadonlyArray<boolean | Error>, ran: readonly Outcome[]): Outcome[] {
  const outcomes: Outcome[] = [];
  let j = 0;
  for (const t of verdicts) {
    if (t instanceof Error) {
      outcomes.push("nack");
      break;
    }
    if (!t) {
      outcomes.push("ack");
      continue;
    }
    const o = ran[j++];
    if (o === undefined) break; // not run (aborted or after a nack)
    outcomes.push(o);
    if (o === "nack") break;
  }
  return outcomes;
}

/** Starts each preparation's settle now (the marks are sent before the batch resolves); `settling` holds them until they end (`flush()`). */
export function startSettles(
  preparations: readonly BatchPreparation[],
  settling: Set<Promise<void>>,
  report: (e: unknown) => void,
  track: (p: Promise<void>) => Promise<void>,
): void {
  for (const p of preparations) {
    if (!p.settle) continue;
    let started: Promise<void>;
    try {
      started = p.settle();
    } catch (e) {
      report(e);
      continue;
    }
    const tracked: Promise<void> = started.then(
      () => undefined,
      (e: unknown) => report(e),
    );
    settling.add(tracked);
    void track(tracked).finally(() => settling.delete(tracked));
  }
}
