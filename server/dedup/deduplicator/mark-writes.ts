/**
 * What every write after the claim shares: a bounded store call tried again after short pauses, and
 * what the value a `done` mark replaced says about the lease. The base of `KeyMarks`.
 */
import type { ResolvedDeduplicatorOptions } from "./deduplicator-options";
import type { DedupRecorder } from "../metrics/recorder";
import { isDoneValue } from "../repository/stored-value";
import { classifyStoreError } from "../repository/store-call";

/**
 * Pauses before the second and third attempt of a `done` mark or a release. A write lost here
 * leaves our `processing` lease on the key for `leaseMs` (60 s by default), and every copy of the
 * message that meets it meanwhile fails as in-progress, is retried and then nacked — holding its
 * whole partition until the lease expires. One transient store error must not cost that, so these
 * writes are tried three times (each failure counted in `deduplication_errors_total`).
 */
export const MARK_RETRY_PAUSES_MS: readonly number[] = [20, 100];

/** Resolves after `ms`. */
export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The retried store calls and the lease checks of the Deduplicator's writes after the claim. */
export class MarkWrites {
  /** Keys whose lost lease the heartbeat already counted: their late `done` mark does not count it again. */
  readonly lostCounted = new Set<string>();

  constructor(
    protected readonly o: Readonly<ResolvedDeduplicatorOptions>,
    protected readonly rec: DedupRecorder,
    protected readonly claimTtl: number,
    protected readonly timed: <T>(p: Promise<T>) => Promise<T>,
  ) {}

  /** `call` (bounded by timeoutMs), tried again after each pause of MARK_RETRY_PAUSES_MS; each failure but the last is counted here (on `handler`), the last is the caller's to count. */
  protected async persist<T>(call: () => Promise<T>, handler: string): Promise<T> {
    try {
      return await this.timed(call());
    } catch (e) {
      return this.again(e, call, handler);
    }
  }

  /** {@link persist} after its first attempt failed with `first` (a hot caller makes that attempt itself: no closure per call). */
  protected async again<T>(first: unknown, call: () => Promise<T>, handler: string): Promise<T> {
    let e = first;
    for (let i = 0; ; i++) {
      const wait = MARK_RETRY_PAUSES_MS[i];
      if (wait === undefined) throw e;
      this.rec.error(classifyStoreError(e), handler);
      await pause(wait);
      try {
        return await this.timed(call());
      } catch (next) {
        e = next;
      }
    }
  }

  /** A `done` mark that failed for good. */
  protected markFailed(e: unknown, key: string, handler: string): void {
    // The handler already succeeded: do not fail the delivery (that would run it again now); the
    // lease expires and only a redelivery after leaseMs could repeat it (spec §5 covers that).
    this.rec.error(classifyStoreError(e), handler);
    this.o.logger(`[dedup] could not mark ${key} done: ${(e as Error)?.message ?? e}`);
  }

  /**
   * The value a `done` mark replaced: our lease, nothing (it expired and nobody took it) or this
   * very mark (a write sent again after a transport error) is fine; anything else — another consumer's lease or its `done` — means the lease had been taken
   * over and the message may have run twice.
   */
  protected checkLease(
    key: string,
    value: string,
    done: string,
    previous: string | null,
    topic: string,
    handler: string,
  ): void {
    const counted = this.lostCounted.size > 0 && this.lostCounted.delete(key);
    if (previous === null || previous === value || previous === done || counted) return;
    this.rec.leaseLost(topic, handler);
    this.o.logger(
      `[dedup] lease of ${key} expired during the handler and another consumer took it over: the message may run twice (raise leaseMs)`,
    );
  }

  /** Our compare-and-set failed: record `done` if the key is free, else count the lost lease. */
  protected async markAfterLostLease(key: string, done: string, topic: string, handler: string): Promise<void> {
    const { repository, ttlMs, logger } = this.o;
    const now = await this.timed(repository.claim(key, done, ttlMs));
    const counted = this.lostCounted.size > 0 && this.lostCounted.delete(key);
    if (now === null || isDoneValue(now) || counted) return;
    this.rec.leaseLost(topic, handler);
    logger(
      `[dedup] lease of ${key} expired during the handler and another consumer took it over: the message may run twice (raise leaseMs)`,
    );
  }
}
