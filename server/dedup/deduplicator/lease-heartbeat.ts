/**
 * The lease heartbeat (marking `"lease"`, option `heartbeat`): while the rest of the stack runs
 * under our claim, the claim is renewed every `leaseMs / 3`, so a handler may run longer than
 * `leaseMs` without a second consumer taking the key. A renewal that finds the key no longer ours
 * aborts the handler through `msg.signal` and counts `deduplication_lease_lost_total` (once: the late
 * `done` mark of a handler that succeeds anyway does not count it again). The claim is never held
 * past `maxLeaseMs`.
 *
 * The hot path stays cheap: one ticker per Deduplicator (running only while a handler does) looks
 * at the running handlers every `leaseMs / 6` and renews those whose claim is `leaseMs / 3` old, so
 * a handler faster than that makes no store call and sets no timer of its own; the abortable signal
 * is built only if the handler reads `msg.signal`. A claim is renewed at most `leaseMs / 2` after
 * the previous renewal, well before it expires.
 */
import { LeaseLostError } from "../errors";
import type { Message } from "../message";
import type { DedupRecorder } from "../metrics/recorder";
import { classifyStoreError } from "../repository/store-call";
import type { Delivery } from "./delivery-results";
import type { ResolvedDeduplicatorOptions } from "./deduplicator-options";

/** One run under a claim. */
interface Beat {
  readonly d: Delivery;
  readonly key: string;
  readonly value: string;
  /** Epoch ms past which the claim is not renewed (`maxLeaseMs` after the start). */
  readonly deadline: number;
  /** Epoch ms of the claim or of its last renewal. */
  renewedAt: number;
  /** A renewal is on the way. */
  busy: boolean;
  /** The renewal on the way, if any (never rejects). */
  pending: Promise<void> | undefined;
  /** Why the handler was aborted, once it was. */
  reason: LeaseLostError | null;
  controller: AbortController | null;
}

/**
 * The message the handler sees: the outer message's fields (the same metadata and context objects:
 * what the handler writes into them the outer message has), whose `signal` also aborts when the
 * lease is lost. A class with the signal as a prototype accessor: an object literal with accessors
 * cost +3.3 µs per message in the probe of docs/LIBRARY.md, this +0.3 to +0.5 µs for the whole heartbeat.
 */
class LeaseMessage implements Message {
  readonly uuid: string;
  readonly payload: Uint8Array;
  readonly key?: Uint8Array;
  metadata: Record<string, string>;
  context: Message["context"];
  readonly #outer: AbortSignal;
  readonly #b: Beat;

  constructor(outer: Message, b: Beat) {
    this.uuid = outer.uuid;
    this.payload = outer.payload;
    if (outer.key) this.key = outer.key;
    this.metadata = outer.metadata;
    this.context = outer.context;
    this.#outer = outer.signal;
    this.#b = b;
  }

  /** Aborts when the transport gives the delivery up or the lease is lost; built on first read. */
  get signal(): AbortSignal {
    const b = this.#b;
    if (!b.controller) {
      const c = new AbortController();
      const outer = this.#outer;
      b.controller = c;
      if (b.reason) c.abort(b.reason);
      else if (outer.aborted) c.abort(outer.reason);
      else outer.addEventListener("abort", () => c.abort(outer.reason), { once: true });
    }
    return b.controller.signal;
  }
}

/** The heartbeats of one Deduplicator. */
export class LeaseHeartbeats {
  /** A claim this old (ms) is renewed at the next tick. */
  private readonly everyMs: number;
  private readonly tickMs: number;
  private readonly running = new Set<Beat>();
  private ticker: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly o: Readonly<ResolvedDeduplicatorOptions>,
    private readonly rec: DedupRecorder,
    private readonly timed: <T>(p: Promise<T>) => Promise<T>,
    /** Keys whose lost lease a renewal counted (`KeyMarks.lostCounted`): their late `done` mark does not count it again. */
    private readonly counted: Set<string>,
  ) {
    this.everyMs = Math.max(1, Math.floor(o.leaseMs / 3));
    this.tickMs = Math.max(1, Math.floor(this.everyMs / 2));
  }

  /** Runs `d.next` under the claim `value` of `key`, renewing it meanwhile. Settles as the handler does. */
  async run(d: Delivery, key: string, value: string): Promise<void | Message[]> {
    const now = Date.now();
    const b: Beat = {
      d,
      key,
      value,
      deadline: now + this.o.maxLeaseMs,
      renewedAt: now,
      busy: false,
      pending: undefined,
      reason: null,
      controller: null,
    };
    this.running.add(b);
    if (this.ticker === undefined) {
      this.ticker = setInterval(() => this.tick(), this.tickMs);
      this.ticker.unref?.();
    }
    let out: void | Message[];
    try {
      out = await d.next(new LeaseMessage(d.msg, b));
    } catch (e) {
      this.running.delete(b);
      if (b.pending) await b.pending;
      this.counted.delete(key); // no `done` mark follows a failure
      throw e;
    }
    // No more renewals. One on the way is waited for (bounded by `timeoutMs` per store call) so that
    // its verdict is known before the `done` mark is sent: a process resumed after a stall fires its
    // overdue renewal as its handler ends, and the mark alone cannot tell another consumer's `done`
    // of the same delivery position from its own.
    this.running.delete(b);
    if (b.pending) await b.pending;
    return out;
  }

  /** Renews the claims that are `everyMs` old; stops when no handler runs. */
  private tick(): void {
    if (this.running.size === 0) {
      clearInterval(this.ticker);
      this.ticker = undefined;
      return;
    }
    const now = Date.now();
    for (const b of this.running) {
      if (b.busy || b.reason) continue;
      if (now >= b.deadline) this.abort(b, new LeaseLostError(b.key, "max-lease", this.o.maxLeaseMs));
      else if (now - b.renewedAt >= this.everyMs) b.pending = this.beat(b, now);
    }
  }

  /** One renewal: the claim's TTL again (never past the deadline), or the handler aborted. */
  private async beat(b: Beat, now: number): Promise<void> {
    const { repository } = this.o;
    const ttl = Math.min(this.o.leaseMs, b.deadline - now);
    b.busy = true;
    try {
      let ours = await this.timed(
        repository.extendLease
          ? repository.extendLease(b.key, b.value, ttl)
          : repository.compareAndSet(b.key, b.value, b.value, ttl),
      );
      // Expired and free (a renewal delayed past the TTL): claimed again under the same token. The
      // handler's end waits for this renewal, so no `done` mark of ours is on the way yet.
      if (!ours) {
        const held = await this.timed(repository.claim(b.key, b.value, ttl));
        ours = held === null || held === b.value;
      }
      if (!ours) return this.lost(b);
      b.renewedAt = now;
    } catch (e) {
      // A store error is no proof of a lost claim: counted, and the next tick tries again.
      this.rec.error(classifyStoreError(e), b.d.handler);
    } finally {
      b.busy = false;
      b.pending = undefined;
    }
  }

  private lost(b: Beat): void {
    // Counted now, whatever the handler does next: the other consumer's copy may already have run.
    this.counted.add(b.key);
    this.rec.leaseLost(b.d.topic, b.d.handler);
    this.o.logger(
      `[dedup] lease of ${b.key} was taken over while the handler ran (the process stalled past leaseMs ${this.o.leaseMs}): the handler is aborted through msg.signal; the message may run twice`,
    );
    this.abort(b, new LeaseLostError(b.key, "taken"));
  }

  private abort(b: Beat, reason: LeaseLostError): void {
    b.reason = reason;
    b.controller?.abort(reason);
  }
}
