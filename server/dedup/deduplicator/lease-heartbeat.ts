/**
 * The lease heartbeat (marking `"lease"`, option `heartbeat`): while the rest of the stack runs
 * under our claim, the claim is renewed every `leaseMs / 3`, so a handler may run longer than
 * `leaseMs` without a second consumer taking the key. A renewal that finds the key no longer ours
 * aborts the handler through `msg.signal` and counts `deduplication_lease_lost_total` (once: the late
 * `done` mark of a handler that succeeds anyway does not count it again). The claim is never held
 * past `maxLeaseMs`.
 *
 * The hot path costs one timer set and cleared: a handler faster than `leaseMs / 3` makes no store
 * call, and the abortable signal is built only if the handler reads `msg.signal`.
 */
import { LeaseLostError } from "../errors";
import type { Message } from "../message";
import type { DedupRecorder } from "../metrics/recorder";
import { classifyStoreError } from "../repository/store-call";
import type { Delivery } from "./delivery-results";
import type { ResolvedDeduplicatorOptions } from "./deduplicator-options";

/** One run under a claim: its timer, its deadline and, once read, its abortable signal. */
interface Beat {
  readonly d: Delivery;
  readonly key: string;
  readonly value: string;
  /** Epoch ms past which the claim is not renewed (`maxLeaseMs` after the start). */
  readonly deadline: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  stopped: boolean;
  /** Why the handler was aborted, once it was. */
  reason: LeaseLostError | null;
  controller: AbortController | null;
}

/** The heartbeats of one Deduplicator. */
export class LeaseHeartbeats {
  private readonly everyMs: number;

  constructor(
    private readonly o: Readonly<ResolvedDeduplicatorOptions>,
    private readonly rec: DedupRecorder,
    private readonly timed: <T>(p: Promise<T>) => Promise<T>,
    /** Keys whose lost lease a renewal counted (`KeyMarks.lostCounted`): their late `done` mark does not count it again. */
    private readonly counted: Set<string>,
  ) {
    this.everyMs = Math.max(1, Math.floor(o.leaseMs / 3));
  }

  /** Runs `d.next` under the claim `value` of `key`, renewing it meanwhile. Settles as the handler does. */
  async run(d: Delivery, key: string, value: string): Promise<void | Message[]> {
    const b: Beat = {
      d,
      key,
      value,
      deadline: Date.now() + this.o.maxLeaseMs,
      timer: undefined,
      stopped: false,
      reason: null,
      controller: null,
    };
    this.schedule(b);
    try {
      return await d.next(this.messageOf(b));
    } catch (e) {
      this.counted.delete(key); // no `done` mark follows a failure
      throw e;
    } finally {
      b.stopped = true;
      clearTimeout(b.timer);
    }
  }

  private schedule(b: Beat): void {
    const wait = Math.min(this.everyMs, b.deadline - Date.now());
    b.timer = setTimeout(() => void this.beat(b), Math.max(0, wait));
    b.timer.unref?.();
  }

  /** One renewal: the claim's TTL again (never past the deadline), or the handler aborted. */
  private async beat(b: Beat): Promise<void> {
    if (b.stopped) return;
    const left = b.deadline - Date.now();
    if (left <= 0) return this.abort(b, new LeaseLostError(b.key, "max-lease", this.o.maxLeaseMs));
    const { repository } = this.o;
    const ttl = Math.min(this.o.leaseMs, left);
    try {
      let ours = await this.timed(
        repository.extendLease
          ? repository.extendLease(b.key, b.value, ttl)
          : repository.compareAndSet(b.key, b.value, b.value, ttl),
      );
      // Expired and free (a renewal delayed past the TTL): claimed again under the same token. Once
      // the handler ended, its own `done` mark may be on the way: the mark's reply decides then.
      if (!ours && b.stopped) return;
      if (!ours) {
        const now = await this.timed(repository.claim(b.key, b.value, ttl));
        ours = now === null || now === b.value;
      }
      // The claim was sent before any `done` mark of ours: its answer stands even if the handler ended meanwhile.
      if (!ours) return this.lost(b);
    } catch (e) {
      // A store error is no proof of a lost claim: counted, and the next beat tries again.
      this.rec.error(classifyStoreError(e), b.d.handler);
    }
    if (!b.stopped) this.schedule(b);
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

  /**
   * The message the handler sees: the same message whose `signal` also aborts when the lease is
   * lost. The combined signal is built only if the handler reads it; metadata and context stay the
   * outer message's.
   */
  private messageOf(b: Beat): Message {
    const msg = b.d.msg;
    return {
      uuid: msg.uuid,
      payload: msg.payload,
      ...(msg.key ? { key: msg.key } : {}),
      get metadata() {
        return msg.metadata;
      },
      set metadata(v) {
        msg.metadata = v;
      },
      get context() {
        return msg.context;
      },
      set context(v) {
        msg.context = v;
      },
      get signal() {
        if (!b.controller) {
          const c = new AbortController();
          b.controller = c;
          if (b.reason) c.abort(b.reason);
          else if (msg.signal.aborted) c.abort(msg.signal.reason);
          else msg.signal.addEventListener("abort", () => c.abort(msg.signal.reason), { once: true });
        }
        return b.controller.signal;
      },
    };
  }
}
