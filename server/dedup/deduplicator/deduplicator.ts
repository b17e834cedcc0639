import { BatchState, NOT_RUN, RAN } from "./batch-state";
import { DeliveryResults, type Delivery } from "./delivery-results";
import {
  DEFAULT_DEDUPLICATOR_OPTIONS,
  validateDeduplicatorOptions,
  type DeduplicatorOptions,
  type ResolvedDeduplicatorOptions,
} from "./deduplicator-options";
import { LeaseHeartbeats } from "./lease-heartbeat";
import { namedMiddleware, type BatchPreparation, type BatchRun, type Handler, type Message } from "../message";
import type { Middleware } from "../message";
import { dedupRecorder, type DedupRecorder } from "../metrics/recorder";
import { ClaimTokens } from "../repository/stored-value";
import { KeyMarks } from "./key-marks";
import { CheckOutcomes } from "./check-outcomes";
import { DedupKeys } from "./dedup-keys";
import { classifyStoreError, timed } from "../repository/store-call";
import type { HotKeys } from "../metrics/hot-keys";
import { deduplicatorHotKeys } from "../metrics/hot-keys-gauge";

const NOOP_PREPARATION: BatchPreparation = { discard: async () => undefined };

/** The Deduplicator as an object (the middleware is `dedup.middleware`); see {@link deduplicator}. */
export class Deduplicator {
  readonly options: Readonly<ResolvedDeduplicatorOptions>;
  private readonly rec: DedupRecorder;
  private readonly results: DeliveryResults;
  private readonly keys: DedupKeys;
  private readonly claimTtl: number;
  /** How old a batch's pre-claim may be and still be acted on (ms). */
  private readonly preclaimMaxAge: number;
  /** The repository never waits on I/O: no timeout timer per call. */
  private readonly inProcess: boolean;
  private readonly marks: KeyMarks;
  private readonly outcomes: CheckOutcomes;
  /** The claim tokens this Deduplicator writes (one per claim, or per batch). */
  private readonly tokens: ClaimTokens;
  /** Renews the claim while the handler runs (option `heartbeat`); null without. */
  private readonly heartbeats: LeaseHeartbeats | null;
  /** The most swallowed keys per handler (fixed memory), on the board the dashboard reads; null without. */
  readonly hotKeys: HotKeys | null;
  /** The middleware (with its batch hook and batch form). */
  readonly middleware: Middleware;

  constructor(options: DeduplicatorOptions) {
    const o = {
      ...DEFAULT_DEDUPLICATOR_OPTIONS,
      ...options,
      failureMode: options.failureMode ?? options.repository?.failureMode ?? "open",
    } as ResolvedDeduplicatorOptions;
    o.maxLeaseMs ??= 10 * o.leaseMs;
    validateDeduplicatorOptions(o, options.repository?.failureMode);
    this.options = o;
    this.rec = dedupRecorder(o.registry, o.service, o.fingerprint !== undefined);
    this.results = new DeliveryResults(this.rec, Symbol("deduplicator"), o.registry !== undefined);
    this.keys = new DedupKeys(o);
    this.claimTtl = o.marking === "lease" ? o.leaseMs : o.ttlMs;
    this.preclaimMaxAge = this.claimTtl * o.preclaimMaxAgeFraction;
    this.inProcess = o.repository.inProcess === true;
    this.marks = new KeyMarks(o, this.rec, this.claimTtl, (p) => this.timed(p));
    this.tokens = new ClaimTokens(o.marking);
    this.hotKeys = deduplicatorHotKeys(o.hotKeys, o.service, o.registry);
    this.outcomes = new CheckOutcomes(o, this.rec, this.results, this.hotKeys);
    const beat = o.heartbeat && o.marking === "lease";
    this.heartbeats = beat ? new LeaseHeartbeats(o, this.rec, (p) => this.timed(p), this.marks.lostCounted) : null;
    const wrap =
      (next: Handler): Handler =>
      (msg) =>
        this.handle(next, msg);
    this.middleware = namedMiddleware("deduplicator", wrap, {
      prepareBatch: (msgs) => this.prepareBatch(msgs),
      onRegister: (h) => {
        this.rec.register(h.topic, h.name);
        this.hotKeys?.track(h.name);
      },
      // A Router batch counts its results in the batch state; "naive" keeps none (it claims per message).
      batch: o.marking === "naive" ? undefined : (next) => (msgs, stop) => this.runBatch(next, msgs, stop),
    });
  }

  /** A store call bounded by `timeoutMs` (not for in-process repositories, which cannot block). */
  private timed<T>(p: Promise<T>): Promise<T> {
    return this.inProcess ? p : timed(p, this.options.timeoutMs, this.options.repository);
  }

  /** The full repository key of `msg`: `<prefix>:<keyFactory(msg)>`. Throws what the key factory throws. */
  keyOf(msg: Message): string {
    return this.keys.keyOf(msg);
  }

  /** The key prefix for a message's handler: `<service>:dedup:<handler>` (spec §2). */
  prefixOf(msg: Message): string {
    return this.keys.prefixOf(msg);
  }

  private handle(next: Handler, msg: Message): Promise<void | Message[]> {
    const topic = msg.context.topic ?? "";
    const handler = msg.context.handler ?? "default";
    const batch = this.results.batchOf(msg);
    if (batch) {
      const bi = batch.indexOf(msg);
      if (bi >= 0) {
        // The error result is counted at the batch's settle (phase RAN, never FINAL).
        if (batch.phase[bi] === NOT_RUN) batch.phase[bi] = RAN;
        return this.check({ next, msg, topic, handler, st: undefined, batch, bi });
      }
    }
    const st = this.results.track(msg, topic, handler);
    return this.check({ next, msg, topic, handler, st, batch: undefined, bi: -1 });
  }

  /**
   * The batch form: the messages in order, each treated as the per-message form treats it, the
   * Deduplicator's part decided synchronously from the batch's pre-claims — no promise chain of its
   * own per message, only the handler's. A message the pre-claims cannot decide (a key that cannot
   * be computed, a stale or unknown pre-claim, a second copy of a key in the batch whose first did
   * not succeed) takes the per-message path. Never rejects.
   */
  private async runBatch(next: Handler, msgs: readonly Message[], stop: AbortSignal): Promise<BatchRun> {
    for (let i = 0; i < msgs.length; i++) {
      const msg = msgs[i]!;
      if (msg.signal.aborted || stop.aborted) return { ran: i };
      try {
        const batch = this.results.batchOf(msg);
        const bi = batch ? batch.indexOf(msg) : -1;
        let key: string | undefined;
        try {
          if (bi >= 0) key = this.keyOf(msg);
        } catch {
          // counted, and the failure mode applied, by the per-message path
        }
        if (key === undefined) {
          await this.handle(next, msg);
          continue;
        }
        const b = batch!;
        // The error result is counted at the batch's settle unless the message ends final.
        if (b.phase[bi] === NOT_RUN) b.phase[bi] = RAN;
        const d: Delivery = {
          next,
          msg,
          topic: msg.context.topic ?? "",
          handler: msg.context.handler ?? "default",
          st: undefined,
          batch: b,
          bi,
        };
        const earlier = b.doneKeys.get(key);
        if (earlier !== undefined) this.outcomes.swallow(d, key, earlier);
        else if (!b.fresh(bi, key, this.preclaimMaxAge)) await this.check(d);
        else {
          const reply = b.replies[bi]!;
          b.keys[bi] = undefined; // used once: a retry of the message claims again
          if (reply !== null) this.outcomes.answered(d, key, reply);
          else await this.runUnderClaim(d, key, b.value);
        }
      } catch (error) {
        return { ran: i, failure: { error } };
      }
    }
    return { ran: msgs.length };
  }

  /**
   * One attempt of a delivery. Without a Router a failed attempt is counted as the `error` result
   * here (under one, at settle), by a catch around the attempt rather than a second async frame.
   */
  private async check(d: Delivery): Promise<void | Message[]> {
    try {
      const o = this.options;
      const { msg, batch, bi } = d;
      let key: string;
      try {
        key = this.keyOf(msg);
      } catch (e) {
        return await this.outcomes.keyFailed(d, e);
      }

      const earlier = batch?.doneKeys.get(key);
      if (earlier !== undefined) return this.outcomes.swallow(d, key, earlier);

      let value: string;
      let reply: string | null;
      const preKey = batch ? batch.keys[bi] : undefined;
      const fresh = batch !== undefined && batch.fresh(bi, key, this.preclaimMaxAge);
      // The pre-claim is used once: a retry of the message claims again.
      if (preKey !== undefined) batch!.keys[bi] = undefined;
      if (fresh) {
        value = batch.value;
        reply = batch.replies[bi]!;
      } else {
        // A stale or unknown pre-claim is re-checked under the same token, so our own claim is recognised.
        value = preKey === key ? batch!.value : this.tokens.next();
        const t0 = performance.now();
        try {
          reply = await this.timed(o.repository.claim(key, value, this.claimTtl));
        } catch (e) {
          return await this.outcomes.storeFailed(d, e, `claim of ${key}`, t0);
        }
        this.outcomes.checked(t0, d.handler);
        if (reply !== null && reply === value && o.marking !== "naive") {
          if (o.marking === "lease") await this.marks.renew(key, value, d.handler);
          reply = null;
        }
      }

      if (reply !== null) return this.outcomes.answered(d, key, reply);
      return await this.runUnderClaim(d, key, value);
    } catch (e) {
      if (d.st && !d.st.routed) this.results.failed(d.st, d.topic, d.handler);
      throw e;
    }
  }

  /**
   * The rest of the stack, run under our claim of `key` (token `value`), on both roads (the batch
   * form and one attempt): a failure releases the key before it goes on outwards; a success is
   * marked done, then counted.
   */
  private async runUnderClaim(d: Delivery, key: string, value: string): Promise<void | Message[]> {
    let out: void | Message[];
    try {
      out = await (this.heartbeats ? this.heartbeats.run(d, key, value) : d.next(d.msg));
    } catch (e) {
      await this.failed(d, key, value);
      throw e;
    }
    const marked = this.markDone(d, key, value);
    if (marked) await marked;
    this.results.success(d);
    return out;
  }

  /** The rest of the stack failed under our claim of `key` (token `value`): the key is released (not under "naive") before the failure goes on outwards. Never rejects. */
  private failed(d: Delivery, key: string, value: string): Promise<void> | undefined {
    return this.options.marking === "naive" ? undefined : this.marks.release(key, value, d.topic, d.handler);
  }

  /**
   * The delivery succeeded under our claim of `key` (token `value`): in a batch its `done` mark
   * waits for the batch's settle; alone, under lease marking, the returned promise is the mark
   * (never rejects). The caller counts the success after it.
   */
  private markDone(d: Delivery, key: string, value: string): Promise<void> | undefined {
    const lease = this.options.marking === "lease";
    const done = this.outcomes.doneValueOf(d.msg, lease);
    if (d.batch)
      d.batch.succeeded(key, done, lease ? { key, value, done, topic: d.topic, handler: d.handler } : undefined);
    else if (lease) return this.marks.complete(key, value, done, d.topic, d.handler);
    return undefined;
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
    const batch = new BatchState(msgs, this.tokens.next(), this.options.registry !== undefined);
    this.results.attach(batch);
    const { reqs, at } = batch.claimRequests((m) => this.keyOf(m), this.claimTtl);
    if (reqs.length > 0) {
      const handler = msgs[0]!.context.handler ?? "default"; // a Router batch is one handler's: one check
      const t0 = performance.now();
      let replies: Array<string | null | Error> | undefined;
      try {
        replies = await this.timed(o.repository.claimBatch(reqs));
      } catch (e) {
        this.outcomes.failedCheck(classifyStoreError(e), t0, handler);
      }
      if (replies) this.outcomes.checked(t0, handler);
      batch.preclaimed(reqs, at, replies);
    }
    return {
      settle: async () => {
        batch.open = false;
        this.results.settle(batch);
        await this.marks.completeMany(batch.marks);
      },
      discard: (notRun) => this.marks.releaseNotRun(batch, notRun),
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
