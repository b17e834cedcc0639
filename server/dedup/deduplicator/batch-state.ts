/**
 * The Deduplicator's state of one Router batch (`prepareBatch`): the pre-claims and the metrics
 * state of the batch's messages. Internal to the Deduplicator.
 */
import type { Message } from "../message";
import type { ClaimRequest } from "../repository/repository";

/** A `done` mark deferred to a batch's settle. */
export interface PendingMark {
  key: string;
  /** Our lease token (`processing:<token>`), the compare-and-set's expected value. */
  value: string;
  /** The `done` value to write (with the delivery's position, see `doneValue`). */
  done: string;
  topic: string;
  handler: string;
}

/** {@link BatchState.phase}: the message's stack has not reached the Deduplicator yet. */
export const NOT_RUN = 0;
/** {@link BatchState.phase}: it ran; counted as an `error` result at settle unless it becomes final. */
export const RAN = 1;
/** {@link BatchState.phase}: it ended in success or deduplicated. */
export const FINAL = 2;

/**
 * Per Router batch: the pre-claims and the metrics state of the batch's messages, in arrays
 * indexed by position in the batch (no object or closure per message), the deferred `done` marks,
 * and the keys that succeeded earlier in the batch. Each message's `context` points to it under the
 * Deduplicator's symbol; a message finds its position by identity, from a cursor that follows the
 * Router's in-order delivery.
 */
export class BatchState {
  /** The pre-claimed key of `msgs[i]`; undefined = none (no key, a repeat in the batch) or already used. */
  readonly keys: Array<string | undefined>;
  /** null = claimed by us; string = existing value; undefined = unknown (the batch failed or timed out). */
  readonly replies: Array<string | null | undefined>;
  /** {@link NOT_RUN}, {@link RAN} or {@link FINAL} per position. */
  readonly phase: Uint8Array;
  readonly marks: PendingMark[] = [];
  /** Keys that succeeded earlier in the batch → their `done` value (a later copy's cause). */
  readonly doneKeys = new Map<string, string>();
  /** When the claim round trip answered (the pre-claims' age). */
  at = 0;
  /** false once settled: a late call falls back to the per-delivery path. */
  open = true;
  private cursor = 0;

  constructor(
    readonly msgs: readonly Message[],
    /** The batch's claim token (one per batch: each key appears once in it). */
    readonly value: string,
    readonly counting: boolean,
  ) {
    this.keys = new Array<string | undefined>(msgs.length);
    this.replies = new Array<string | null | undefined>(msgs.length);
    this.phase = new Uint8Array(msgs.length);
  }
  /** The pre-claim of position `bi` is for `key`, answered, and no older than `maxAgeMs`. */
  fresh(bi: number, key: string, maxAgeMs: number): boolean {
    return this.keys[bi] === key && this.replies[bi] !== undefined && Date.now() - this.at <= maxAgeMs;
  }

  /**
   * The batch's claims: one per distinct key (`keyOf` of each message; a message whose key cannot
   * be computed is left to the per-message path, which counts `marshal` and applies the failure
   * mode), under the batch's token; `at[j]` is the position of `reqs[j]`'s message.
   */
  claimRequests(keyOf: (m: Message) => string, ttlMs: number): { reqs: ClaimRequest[]; at: number[] } {
    const reqs: ClaimRequest[] = [];
    const at: number[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < this.msgs.length; i++) {
      let key: string;
      try {
        key = keyOf(this.msgs[i]!);
      } catch {
        continue;
      }
      // A second copy of a key in the same batch claims at its turn, after the first copy finished:
      // pre-claimed now it would see the first copy's lease and fail as in-progress.
      if (seen.has(key)) continue;
      seen.add(key);
      reqs.push({ key, value: this.value, ttlMs });
      at.push(i);
    }
    return { reqs, at };
  }

  /** Remembers the claim round trip's replies (none: it failed; an Error in a slot: unknown). */
  preclaimed(
    reqs: readonly ClaimRequest[],
    at: readonly number[],
    replies: ReadonlyArray<string | null | Error> | undefined,
  ): void {
    this.at = Date.now();
    for (let j = 0; j < at.length; j++) {
      const i = at[j]!;
      const r = replies?.[j];
      this.keys[i] = reqs[j]!.key;
      this.replies[i] = r instanceof Error ? undefined : r;
    }
  }

  /**
   * `key`'s message succeeded with `done`: a later copy of the key in this batch is swallowed, and
   * its `mark` (lease marking) is deferred to the batch's settle, which sends all marks in one round
   * trip before deliverBatch resolves and which the transport awaits (sink.flush) before it commits.
   */
  succeeded(key: string, done: string, mark: PendingMark | undefined): void {
    this.doneKeys.set(key, done);
    if (mark) this.marks.push(mark);
  }

  /** Position of `msg` in the batch, or -1. */
  indexOf(msg: Message): number {
    const n = this.msgs.length;
    for (let i = this.cursor; i < n; i++) {
      if (this.msgs[i] === msg) return (this.cursor = i);
    }
    for (let i = 0; i < this.cursor; i++) if (this.msgs[i] === msg) return i;
    return -1;
  }
}
