/**
 * The Deduplicator's state of one Router batch (`prepareBatch`): the pre-claims and the metrics
 * state of the batch's messages. Internal to the Deduplicator.
 */
import type { PendingMark } from "./key-marks";
import type { Message } from "./message";

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
