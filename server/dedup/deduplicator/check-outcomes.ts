/**
 * How a delivery's check ends when its handler does not simply run under our claim — the key was
 * already held (in progress elsewhere, or a repeat: swallowed), or the key could not be computed or
 * the store failed (counted; the failure mode decides, fail-open runs the handler unchecked) — and
 * the check-duration samples.
 * Internal to the Deduplicator.
 */
import { DedupStoreError, InProgressError, PayloadConflictError } from "../errors";
import type { ResolvedDeduplicatorOptions } from "./deduplicator-options";
import type { DeliveryResults, Delivery } from "./delivery-results";
import type { Message } from "../message";
import type { DedupRecorder } from "../metrics/recorder";
import { PROCESSING_PREFIX, doneValue, positionOf, storedFingerprint } from "../repository/stored-value";
import { PayloadFingerprints } from "./payload-fingerprint";
import { DEDUP_ERROR_REASON, type DedupErrorReason } from "../../../names/dedup";
import { classifyStoreError } from "../repository/store-call";
import { noteSwallowed, type HotKeys } from "../metrics/hot-keys";

export class CheckOutcomes {
  /** The fingerprints this handler's copies are compared by (its `fingerprint` option). */
  private readonly fingerprints: PayloadFingerprints;

  constructor(
    private readonly o: Readonly<ResolvedDeduplicatorOptions>,
    private readonly rec: DedupRecorder,
    private readonly results: DeliveryResults,
    /** The handler's most swallowed keys, or null. */
    private readonly hotKeys: HotKeys | null,
  ) {
    this.fingerprints = new PayloadFingerprints(o.fingerprint, (handler) => rec.fingerprintFallback(handler));
  }

  /**
   * The `done` value of a delivery that succeeded: its position and, with `fingerprint` (lease
   * marking), the fingerprint a later copy is compared by — the same function {@link swallow} uses.
   */
  doneValueOf(msg: Message, fingerprint: boolean): string {
    const fp = fingerprint ? this.fingerprints.of(msg.payload, msg.context.handler) : undefined;
    return doneValue(positionOf(msg.context), fp);
  }

  /** The key already held `reply`: in progress elsewhere (lease marking: fails, to be retried) or a repeat (swallowed). */
  answered(d: Delivery, key: string, reply: string): undefined {
    if (this.o.marking === "lease" && reply.startsWith(PROCESSING_PREFIX)) {
      this.rec.inProgress(d.topic, d.handler);
      throw new InProgressError(key);
    }
    return this.swallow(d, key, reply);
  }

  /**
   * Swallows a repeat; `stored` is the key's value (or the earlier copy's `done` value in this
   * batch), for the cause. A copy whose payload differs from the processed one (stored fingerprint)
   * is counted as a payload conflict and, under `onPayloadConflict: "poison"`, fails with
   * `PayloadConflictError` instead (for PoisonQueue's DLQ).
   */
  swallow(d: Delivery, key: string, stored: string): undefined {
    const fp = storedFingerprint(stored);
    if (fp !== undefined) {
      const mine = this.fingerprints.of(d.msg.payload, d.handler);
      if (mine !== fp) {
        this.rec.payloadConflict(d.handler, this.fingerprints.compared(d.msg.payload));
        this.o.logger(
          `[dedup] payload conflict: handler=${d.handler} topic=${d.topic} uuid=${d.msg.uuid} key=${key} was processed with another payload (a publisher reused the UUID)`,
        );
        if (this.o.onPayloadConflict === "poison") throw new PayloadConflictError(key, fp, mine);
      }
    }
    const cause = this.results.deduplicated(d, stored);
    noteSwallowed(
      this.hotKeys,
      { key, uuid: d.msg.uuid, handler: d.handler, topic: d.topic, cause, position: positionOf(d.msg.context) },
      this.o.logDuplicates,
      this.o.logger,
    );
    return undefined;
  }

  /** Fail-open: the handler runs unchecked, counted before it runs (it may fail or never return). */
  async passThrough(d: Delivery, reason: DedupErrorReason): Promise<void | Message[]> {
    this.rec.unchecked(d.handler, reason);
    const out = await d.next(d.msg);
    this.results.success(d);
    return out;
  }

  /**
   * A completed check of `handler`'s key(s) begun at `t0`, with its check-duration sample — none
   * when the connection was down at some moment since: a check that waited for the reconnect times
   * the outage's end, not a working store. Its moment is `t0`: what the store answered was sent then.
   */
  checked(t0: number, handler: string): void {
    const end = performance.now();
    this.rec.check(handler, end, this.o.repository.connectionLostSince?.(t0) ? null : (end - t0) / 1000, t0);
  }

  /** The key factory failed on `d`'s message with `e`: counted as `marshal`, then the failure mode decides. */
  keyFailed(d: Delivery, e: unknown): Promise<void | Message[]> {
    this.rec.error(DEDUP_ERROR_REASON.marshal, d.handler);
    if (this.o.failureMode === "closed") {
      throw new DedupStoreError(
        DEDUP_ERROR_REASON.marshal,
        `dedup key of message ${d.msg.uuid} could not be computed: ${(e as Error)?.message ?? e}`,
        { cause: e },
      );
    }
    return this.passThrough(d, DEDUP_ERROR_REASON.marshal);
  }

  /** A failed store call: counted, then the failure mode decides (spec §4). */
  storeFailed(d: Delivery, e: unknown, what: string, t0: number): Promise<void | Message[]> {
    const reason = classifyStoreError(e);
    this.failedCheck(reason, t0, d.handler);
    if (this.o.failureMode === "closed") {
      throw new DedupStoreError(
        reason,
        `dedup store failed (${reason}) on ${what}: ${(e as Error)?.message ?? e}; fail-closed, so the message is retried and then poisoned`,
        { cause: e },
      );
    }
    return this.passThrough(d, reason);
  }

  /**
   * A failed check of `handler`'s key(s), counted; it is a latency sample only when it timed out on
   * a connection that stayed ready (a slow store); a store that was down is no sample of a working
   * one (docs/SEED-ERRATA.md).
   */
  failedCheck(reason: DedupErrorReason, t0: number, handler: string): void {
    const end = performance.now();
    this.rec.check(handler, end, reason === DEDUP_ERROR_REASON.redisTimeout ? (end - t0) / 1000 : null);
    this.rec.error(reason, handler);
  }
}
