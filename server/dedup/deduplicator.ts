import { randomBytes } from "node:crypto";
import { DedupStoreError, InProgressError } from "./errors";
import {
  DEFAULT_DEDUPLICATOR_OPTIONS,
  validateDeduplicatorOptions,
  type DeduplicatorOptions,
  type ResolvedDeduplicatorOptions,
} from "./deduplicator-options";
import { namedMiddleware, type BatchPreparation, type Handler, type Message, type Middleware } from "./message";
import { dedupRecorder, type DedupRecorder } from "./metrics";
import { CLAIMED_PREFIX, NAIVE_VALUE, PROCESSING_PREFIX, type ClaimRequest } from "./repository";
import { KeyMarks, type PendingMark } from "./key-marks";
import { dedupKeyPrefix } from "./names";
import { doneValue, duplicateCause, positionOf } from "./duplicate-cause";
import { classifyStoreError, timed } from "./store-call";

export * from "./deduplicator-options";
export { classifyStoreError, StoreTimeoutError } from "./store-call";

/** {@link BatchState.phase}: the message's stack has not reached the Deduplicator yet. */
const NOT_RUN = 0;
/** {@link BatchState.phase}: it ran; counted as an `error` result at settle unless it becomes final. */
const RAN = 1;
/** {@link BatchState.phase}: it ended in success or deduplicated. */
const FINAL = 2;

/**
 * Per Router batch (`prepareBatch`): the pre-claims and the metrics state of the batch's messages,
 * in arrays indexed by position in the batch (no object or closure per message), the deferred
 * `done` marks, and the keys that succeeded earlier in the batch. Each message's `context` points
 * to it under the Deduplicator's symbol; a message finds its position by identity, from a cursor
 * that follows the Router's in-order delivery.
 */
class BatchState {
  /** The pre-claimed key of `msgs[i]`; undefined = none (no key, a repeat in the batch) or already used. */
  readonly keys: Array<string | undefined>;
  /** null = claimed by us; string = existing value; undefined = unknown (the batch failed or timed out). */
  readonly replies: Array<string | null | undefined>;
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

/**
 * What this Deduplicator keeps per delivery outside a batch, stored on the delivery's own
 * `context` under a per-instance symbol (cheaper than WeakMaps on the hot path, and gone with the delivery).
 */
interface DeliveryState {
  /** Metrics: the delivery ended in success or deduplicated (not error). */
  final: boolean;
  errorCounted: boolean;
  /** onSettled registered (or found unavailable). */
  tracked: boolean;
  routed: boolean;
}

/** The metrics state `check` updates: a delivery's own, or a position in a batch. */
type Tracking = DeliveryState | undefined;

const PROCESS_TAG = randomBytes(6).toString("base64url");
let seq = 0;
const NOOP_PREPARATION: BatchPreparation = { discard: async () => undefined };

/** The Deduplicator as an object (the middleware is `dedup.middleware`); see {@link deduplicator}. */
export class Deduplicator {
  readonly options: Readonly<ResolvedDeduplicatorOptions>;
  private readonly rec: DedupRecorder;
  private readonly prefixes = new Map<string, string>();
  private readonly slot = Symbol("deduplicator");
  private readonly claimTtl: number;
  /** The repository never waits on I/O: no timeout timer per call. */
  private readonly inProcess: boolean;
  private readonly marks: KeyMarks;
  /** `processing:<process tag>` / `claimed:<process tag>`; a sequence number completes the token. */
  private readonly valuePrefix: string;
  private readonly closed: boolean;

  constructor(options: DeduplicatorOptions) {
    const o = { ...DEFAULT_DEDUPLICATOR_OPTIONS, ...options } as ResolvedDeduplicatorOptions;
    validateDeduplicatorOptions(o);
    this.options = o;
    this.rec = dedupRecorder(o.registry, o.service);
    this.claimTtl = o.marking === "lease" ? o.leaseMs : o.ttlMs;
    this.closed = o.repository.failureMode === "closed";
    this.inProcess = o.repository.inProcess === true;
    this.marks = new KeyMarks(o, this.rec, this.claimTtl, (p) => this.timed(p));
    this.valuePrefix = (o.marking === "lease" ? PROCESSING_PREFIX : CLAIMED_PREFIX) + PROCESS_TAG;
  }

  private stateOf(msg: Message): DeliveryState {
    const ctx = msg.context as Record<symbol, DeliveryState | BatchState | undefined>;
    let s = ctx[this.slot];
    if (!s || s instanceof BatchState) {
      s = { final: false, errorCounted: false, tracked: false, routed: false };
      ctx[this.slot] = s;
    }
    return s;
  }

  /** A store call bounded by `timeoutMs` (not for in-process repositories, which cannot block). */
  private timed<T>(p: Promise<T>): Promise<T> {
    return this.inProcess ? p : timed(p, this.options.timeoutMs);
  }

  /** The middleware (with its batch hook). */
  readonly middleware: Middleware = namedMiddleware(
    "deduplicator",
    (next) => (msg) => this.handle(next, msg),
    { prepareBatch: (msgs) => this.prepareBatch(msgs), onRegister: (h) => this.rec.register(h.topic, h.name) },
  );

  /** The full repository key of `msg`: `<prefix>:<keyFactory(msg)>`. Throws what the key factory throws. */
  keyOf(msg: Message): string {
    const k = this.options.keyFactory(msg);
    if (typeof k !== "string" || k === "") throw new Error("keyFactory returned an empty or non-string key");
    return `${this.prefixOf(msg)}:${k}`;
  }

  /** The key prefix for a message's handler: `<service>:dedup:<handler>` (spec §2). */
  prefixOf(msg: Message): string {
    if (this.options.prefix) return this.options.prefix;
    const handler = msg.context.handler ?? "default";
    let p = this.prefixes.get(handler);
    if (p === undefined) {
      p = dedupKeyPrefix(this.options.service, handler);
      this.prefixes.set(handler, p);
    }
    return p;
  }


  private newValue(): string {
    return this.options.marking === "naive" ? NAIVE_VALUE : this.valuePrefix + (seq++).toString(36);
  }

  private track(msg: Message, topic: string, handler: string): DeliveryState | undefined {
    if (!this.options.registry) return undefined;
    const st = this.stateOf(msg);
    if (st.tracked) return st;
    st.tracked = true;
    st.routed = typeof msg.context.onSettled === "function";
    if (st.routed) {
      msg.context.onSettled!(() => {
        if (!st.final) this.rec.result(topic, handler, "error");
      });
    }
    return st;
  }

  private handle(next: Handler, msg: Message): Promise<void | Message[]> {
    const topic = msg.context.topic ?? "";
    const handler = msg.context.handler ?? "default";
    const slot = (msg.context as Record<symbol, DeliveryState | BatchState | undefined>)[this.slot];
    if (slot instanceof BatchState && slot.open) {
      const i = slot.indexOf(msg);
      if (i >= 0) {
        // The error result is counted at the batch's settle (phase RAN, never FINAL).
        if (slot.phase[i] === NOT_RUN) slot.phase[i] = RAN;
        return this.check(next, msg, topic, handler, undefined, slot, i);
      }
    }
    const st = this.track(msg, topic, handler);
    // Under a Router the error result is counted at settle; only without one is a catch needed here.
    if (!st || st.routed) return this.check(next, msg, topic, handler, st);
    return this.checkCountingErrors(next, msg, topic, handler, st);
  }

  private async checkCountingErrors(next: Handler, msg: Message, topic: string, handler: string, st: DeliveryState): Promise<void | Message[]> {
    try {
      return await this.check(next, msg, topic, handler, st);
    } catch (e) {
      if (!st.final && !st.errorCounted) {
        st.errorCounted = true;
        this.rec.result(topic, handler, "error");
      }
      throw e;
    }
  }

  private async check(next: Handler, msg: Message, topic: string, handler: string, st: Tracking, batch?: BatchState, bi = -1): Promise<void | Message[]> {
    const o = this.options;
    let key: string;
    try {
      key = this.keyOf(msg);
    } catch (e) {
      this.rec.error("marshal");
      if (this.closed) throw new DedupStoreError("marshal", `dedup key of message ${msg.uuid} could not be computed: ${(e as Error)?.message ?? e}`, { cause: e });
      return this.passThrough(next, msg, topic, handler, st, batch, bi);
    }

    const earlier = batch?.doneKeys.get(key);
    if (earlier !== undefined) return this.swallow(msg, key, topic, handler, st, batch, bi, earlier);

    let value: string;
    let reply: string | null;
    // The pre-claim is used once: a retry of the message claims again.
    const preKey = batch ? batch.keys[bi] : undefined;
    const preReply = batch ? batch.replies[bi] : undefined;
    if (preKey !== undefined) batch!.keys[bi] = undefined;
    if (preKey === key && preReply !== undefined && Date.now() - batch!.at <= this.claimTtl * o.preclaimMaxAgeFraction) {
      value = batch!.value;
      reply = preReply;
    } else {
      // A stale or unknown pre-claim is re-checked under the same token, so our own claim is recognised.
      value = preKey === key ? batch!.value : this.newValue();
      const t0 = performance.now();
      try {
        reply = await this.timed(o.repository.claim(key, value, this.claimTtl));
      } catch (e) {
        this.rec.checkSeconds((performance.now() - t0) / 1000);
        return this.storeFailed(e, `claim of ${key}`, next, msg, topic, handler, st, batch, bi);
      }
      this.rec.checkSeconds((performance.now() - t0) / 1000);
      if (reply !== null && reply === value && o.marking !== "naive") {
        if (o.marking === "lease") await this.marks.renew(key, value);
        reply = null;
      }
    }

    if (reply !== null) {
      if (o.marking === "lease" && reply.startsWith(PROCESSING_PREFIX)) {
        this.rec.inProgress(topic, handler);
        throw new InProgressError(key);
      }
      return this.swallow(msg, key, topic, handler, st, batch, bi, reply);
    }

    let out: void | Message[];
    try {
      out = await next(msg);
    } catch (e) {
      if (o.marking !== "naive") await this.marks.release(key, value, topic, handler);
      throw e;
    }
    // The `done` value names this delivery's position: a later copy at the same position is a
    // redelivery, at another a re-publish (messages_duplicates_by_cause_total).
    const done = doneValue(positionOf(msg.context));
    if (batch) {
      // Inside a Router batch the `done` mark is deferred to the batch's settle(), which sends it
      // before deliverBatch resolves and which the transport awaits (sink.flush) before it commits:
      // one round trip for all marks of the batch. A later copy of this key in the same batch is
      // swallowed via doneKeys.
      batch.doneKeys.set(key, done);
      if (o.marking === "lease") batch.marks.push({ key, value, done, topic, handler });
    } else if (o.marking === "lease") await this.marks.complete(key, value, done, topic, handler);
    if (st) st.final = true;
    else if (batch) batch.phase[bi] = FINAL;
    this.rec.result(topic, handler, "success");
    return out;
  }

  /** Swallows a repeat; `stored` is the key's value (or the earlier copy's `done` value in this batch), for the cause. */
  private swallow(msg: Message, key: string, topic: string, handler: string, st: Tracking, batch: BatchState | undefined, bi: number, stored: string): undefined {
    if (st) st.final = true;
    else if (batch) batch.phase[bi] = FINAL;
    this.rec.result(topic, handler, "deduplicated");
    if (this.options.registry) this.rec.duplicate(topic, handler, duplicateCause(stored, positionOf(msg.context)));
    if (this.options.logDuplicates) this.options.logger(`[dedup] duplicate swallowed: handler=${handler} topic=${topic} uuid=${msg.uuid} key=${key}`);
    return undefined;
  }

  private async passThrough(next: Handler, msg: Message, topic: string, handler: string, st: Tracking, batch?: BatchState, bi = -1): Promise<void | Message[]> {
    const out = await next(msg);
    if (st) st.final = true;
    else if (batch) batch.phase[bi] = FINAL;
    this.rec.result(topic, handler, "success");
    return out;
  }

  private storeFailed(e: unknown, what: string, next: Handler, msg: Message, topic: string, handler: string, st: Tracking, batch?: BatchState, bi = -1): Promise<void | Message[]> {
    const reason = classifyStoreError(e);
    this.rec.error(reason);
    if (this.closed) {
      throw new DedupStoreError(reason, `dedup store failed (${reason}) on ${what}: ${(e as Error)?.message ?? e}; fail-closed, so the message is retried and then poisoned`, { cause: e });
    }
    return this.passThrough(next, msg, topic, handler, st, batch, bi);
  }


  /**
   * The batch hook (Router `deliverBatch`): claims every message's key in ONE `claimBatch` round
   * trip and remembers each reply for the per-message path. Not used by `"naive"` (Watermill claims
   * right before the handler). Never throws: a failed batch leaves each message to claim itself
   * (under the same token, so a claim that did land is recognised as ours).
   */
  async prepareBatch(msgs: readonly Message[]): Promise<BatchPreparation> {
    const o = this.options;
    if (o.marking === "naive" || msgs.length === 0) return NOOP_PREPARATION;
    // One token for the whole batch: each key appears once in it, so the token still tells our claim
    // of a key from anyone else's; and the store call carries one value instead of one per key.
    const batch = new BatchState(msgs, this.newValue(), this.options.registry !== undefined);
    const reqs: ClaimRequest[] = [];
    const at: number[] = [];
    const seen = new Set<string>();
    const slot = this.slot;
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      (m.context as Record<symbol, BatchState>)[slot] = batch;
      let key: string;
      try {
        key = this.keyOf(m);
      } catch {
        continue; // the per-message path counts `marshal` and applies the failure mode
      }
      // A second copy of a key in the same batch claims at its turn, after the first copy finished:
      // pre-claimed now it would see the first copy's lease and fail as in-progress.
      if (seen.has(key)) continue;
      seen.add(key);
      reqs.push({ key, value: batch.value, ttlMs: this.claimTtl });
      at.push(i);
    }
    if (reqs.length > 0) {
      const t0 = performance.now();
      let replies: Array<string | null | Error> | undefined;
      try {
        replies = await this.timed(o.repository.claimBatch(reqs));
      } catch (e) {
        this.rec.error(classifyStoreError(e));
      }
      this.rec.checkSeconds((performance.now() - t0) / 1000);
      batch.at = Date.now();
      for (let j = 0; j < at.length; j++) {
        const i = at[j]!;
        const r = replies?.[j];
        batch.keys[i] = reqs[j]!.key;
        batch.replies[i] = r instanceof Error ? undefined : r;
      }
    }
    return {
      settle: async () => {
        batch.open = false;
        if (batch.counting) {
          // A message whose stack reached the Deduplicator but never ended in success or
          // deduplicated is an `error` result (what onSettled counts outside a batch).
          for (let i = 0; i < msgs.length; i++) {
            if (batch.phase[i] === RAN) {
              const c = msgs[i]!.context;
              this.rec.result(c.topic ?? "", c.handler ?? "default", "error");
            }
          }
        }
        await this.marks.completeMany(batch.marks);
      },
      discard: async (notRun) => {
        const releases: Promise<unknown>[] = [];
        for (const m of notRun) {
          const i = batch.indexOf(m);
          if (i < 0) continue;
          const key = batch.keys[i];
          if (key === undefined) continue;
          batch.keys[i] = undefined;
          const r = batch.replies[i];
          if (r === null || r === undefined) {
            releases.push(this.timed(o.repository.compareAndDelete(key, batch.value)).catch((e: unknown) => this.rec.error(classifyStoreError(e))));
          }
        }
        await Promise.all(releases);
      },
    };
  }
}

/**
 * The Deduplicator middleware: the last in the stack, right before the handler (spec §2, §10).
 * A repeat of a processed message is swallowed (ack, handler not called); a failed attempt releases
 * its key so Retry and redelivery run the handler again; see {@link Marking}.
 */
export function deduplicator(options: DeduplicatorOptions): Middleware {
  return new Deduplicator(options).middleware;
}
