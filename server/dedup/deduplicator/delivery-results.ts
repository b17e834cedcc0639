/**
 * The Deduplicator's metrics bookkeeping per delivery: which deliveries end as `success`,
 * `deduplicated` or `error` in `messages_processed_total` (once per delivery, see `./metrics`),
 * and the per-delivery values the Deduplicator's steps share. Internal to the Deduplicator.
 */
import { BatchState, FINAL, RAN } from "./batch-state";
import type { Handler, Message } from "../message";
import type { DedupRecorder } from "../metrics/recorder";
import { duplicateCause, positionOf } from "../repository/stored-value";
import { PROCESSED_RESULT, type DuplicateCause } from "../../../names/dedup";

/**
 * What the Deduplicator keeps per delivery outside a batch, stored on the delivery's own
 * `context` under a per-instance symbol (cheaper than WeakMaps on the hot path, and gone with the delivery).
 */
export interface DeliveryState {
  /** The delivery ended in success or deduplicated (not error). */
  final: boolean;
  errorCounted: boolean;
  /** onSettled registered (or found unavailable). */
  tracked: boolean;
  routed: boolean;
}

/** One delivery as the Deduplicator's steps see it (one object instead of seven parameters). */
export interface Delivery {
  readonly next: Handler;
  readonly msg: Message;
  readonly topic: string;
  readonly handler: string;
  /** Its metrics state outside a batch; undefined inside one or without a registry. */
  readonly st: DeliveryState | undefined;
  /** The Router batch it was pre-claimed in, with its position `bi` there. */
  readonly batch: BatchState | undefined;
  readonly bi: number;
}

type Slots = Record<symbol, DeliveryState | BatchState | undefined>;

/** Counts each delivery's result once, on the Deduplicator's recorder. */
export class DeliveryResults {
  constructor(
    private readonly rec: DedupRecorder,
    /** The Deduplicator's slot on `context`, shared with its {@link BatchState}. */
    private readonly slot: symbol,
    /** A registry was given: results are counted. */
    private readonly counting: boolean,
  ) {}

  /** The batch `msg` belongs to (still open), or undefined. */
  batchOf(msg: Message): BatchState | undefined {
    const s = (msg.context as Slots)[this.slot];
    return s instanceof BatchState && s.open ? s : undefined;
  }

  /** Points each message of a batch at its state. */
  attach(batch: BatchState): void {
    for (const m of batch.msgs) (m.context as Slots)[this.slot] = batch;
  }

  /**
   * The delivery's state, with its `error` result registered for when the Router settles it
   * (`onSettled`); undefined without a registry.
   */
  track(msg: Message, topic: string, handler: string): DeliveryState | undefined {
    if (!this.counting) return undefined;
    const ctx = msg.context as Slots;
    let st = ctx[this.slot];
    if (!st || st instanceof BatchState) {
      st = { final: false, errorCounted: false, tracked: false, routed: false };
      ctx[this.slot] = st;
    }
    if (st.tracked) return st;
    st.tracked = true;
    st.routed = typeof msg.context.onSettled === "function";
    if (st.routed) {
      const s = st;
      msg.context.onSettled!(() => {
        if (!s.final) this.rec.result(topic, handler, PROCESSED_RESULT.error);
      });
    }
    return st;
  }

  /** Without a Router: the delivery failed now (counted once, unless it already ended final). */
  failed(st: DeliveryState, topic: string, handler: string): void {
    if (!st.final && !st.errorCounted) {
      st.errorCounted = true;
      this.rec.result(topic, handler, PROCESSED_RESULT.error);
    }
  }

  /** The handler succeeded in this delivery (also a fail-open pass-through). */
  success(d: Delivery): void {
    this.final(d);
    this.rec.result(d.topic, d.handler, PROCESSED_RESULT.success);
  }

  /** The delivery was swallowed as a repeat; `stored` is the key's value. Returns the copy's cause. */
  deduplicated(d: Delivery, stored: string): DuplicateCause {
    this.final(d);
    this.rec.result(d.topic, d.handler, PROCESSED_RESULT.deduplicated);
    const cause = duplicateCause(stored, positionOf(d.msg.context));
    if (this.counting) this.rec.duplicate(d.topic, d.handler, cause);
    return cause;
  }

  /**
   * At a batch's settle: a message whose stack reached the Deduplicator but never ended in success
   * or deduplicated is an `error` result (what onSettled counts outside a batch).
   */
  settle(batch: BatchState): void {
    if (!batch.counting) return;
    for (let i = 0; i < batch.msgs.length; i++) {
      if (batch.phase[i] === RAN) {
        const c = batch.msgs[i]!.context;
        this.rec.result(c.topic ?? "", c.handler ?? "default", PROCESSED_RESULT.error);
      }
    }
  }

  private final(d: Delivery): void {
    if (d.st) d.st.final = true;
    else if (d.batch) d.batch.phase[d.bi] = FINAL;
  }
}
