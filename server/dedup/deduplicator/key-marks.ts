import type { BatchState, PendingMark } from "./batch-state";

export type { PendingMark } from "./batch-state";
import type { ResolvedDeduplicatorOptions } from "./deduplicator-options";
import type { Message } from "../message";
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

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The Deduplicator's writes after the claim: renew, `done` (one or a batch), release. None of them
 * throws — the handler's outcome is already decided; failures are counted and logged. A failed
 * `done` mark or release is tried again ({@link MARK_RETRY_PAUSES_MS}).
 */
export class KeyMarks {
  /** Keys whose lost lease the heartbeat already counted: their late `done` mark does not count it again. */
  readonly lostCounted = new Set<string>();

  constructor(
    private readonly o: Readonly<ResolvedDeduplicatorOptions>,
    private readonly rec: DedupRecorder,
    private readonly claimTtl: number,
    private readonly timed: <T>(p: Promise<T>) => Promise<T>,
  ) {}

  /** `call` (bounded by timeoutMs), tried again after each pause of MARK_RETRY_PAUSES_MS; each failure but the last is counted here (on `handler`), the last is the caller's to count. */
  private async persist<T>(call: () => Promise<T>, handler: string): Promise<T> {
    try {
      return await this.timed(call());
    } catch (e) {
      return this.again(e, call, handler);
    }
  }

  /** {@link persist} after its first attempt failed with `first` (a hot caller makes that attempt itself: no closure per call). */
  private async again<T>(first: unknown, call: () => Promise<T>, handler: string): Promise<T> {
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

  /** Extends our own lease (a stale pre-claim that is still ours). */
  async renew(key: string, value: string, handler: string): Promise<void> {
    try {
      await this.timed(this.o.repository.compareAndSet(key, value, value, this.o.leaseMs));
    } catch (e) {
      this.rec.error(classifyStoreError(e), handler);
    }
  }

  /**
   * Lease marking, after success: `done` (with the position) for ttlMs. With `markDone` one
   * unconditional write — the success is a fact whoever holds the lease now — whose previous value
   * tells whether the lease was still ours; else compare-and-set, then `done` if the key is free.
   * Never rejects. The usual path is the write's own promise chain: no async frame per message.
   */
  complete(key: string, value: string, done: string, topic: string, handler: string): Promise<void> {
    const { repository, ttlMs } = this.o;
    if (!repository.markDone) return this.completeByCompareAndSet(key, value, done, topic, handler);
    let first: Promise<string | null>;
    try {
      first = this.timed(repository.markDone(key, done, ttlMs));
    } catch (e) {
      first = Promise.reject(e);
    }
    return first.then(
      (previous) => this.checkLease(key, value, done, previous, topic, handler),
      (e: unknown) => this.markDoneFailed(e, key, value, done, topic, handler),
    );
  }

  /** {@link complete} on a repository without `markDone`. */
  private async completeByCompareAndSet(
    key: string,
    value: string,
    done: string,
    topic: string,
    handler: string,
  ): Promise<void> {
    const { repository, ttlMs } = this.o;
    try {
      if (await this.persist(() => repository.compareAndSet(key, value, done, ttlMs), handler)) return;
      await this.markAfterLostLease(key, done, topic, handler);
    } catch (e) {
      this.markFailed(e, key, handler);
    }
  }

  /** The first `markDone` of {@link complete} failed with `first`: tried again, then checked or counted. Never throws. */
  private async markDoneFailed(
    first: unknown,
    key: string,
    value: string,
    done: string,
    topic: string,
    handler: string,
  ): Promise<void> {
    const { repository, ttlMs } = this.o;
    try {
      this.checkLease(
        key,
        value,
        done,
        await this.again(first, () => repository.markDone!(key, done, ttlMs), handler),
        topic,
        handler,
      );
    } catch (e) {
      this.markFailed(e, key, handler);
    }
  }

  /** A `done` mark that failed for good. */
  private markFailed(e: unknown, key: string, handler: string): void {
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
  private checkLease(
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
  private async markAfterLostLease(key: string, done: string, topic: string, handler: string): Promise<void> {
    const { repository, ttlMs, logger } = this.o;
    const now = await this.timed(repository.claim(key, done, ttlMs));
    const counted = this.lostCounted.size > 0 && this.lostCounted.delete(key);
    if (now === null || isDoneValue(now) || counted) return;
    this.rec.leaseLost(topic, handler);
    logger(
      `[dedup] lease of ${key} expired during the handler and another consumer took it over: the message may run twice (raise leaseMs)`,
    );
  }

  /** The deferred `done` marks of a batch: one `compareAndSetBatch` when the repository has it. */
  async completeMany(marks: readonly PendingMark[]): Promise<void> {
    if (marks.length === 0) return;
    const { repository, ttlMs, logger } = this.o;
    if (repository.markDoneBatch) return this.markMany(marks);
    // A batch's marks are one handler's.
    const handler = marks[0]!.handler;
    if (!repository.compareAndSetBatch) {
      await Promise.all(marks.map((m) => this.complete(m.key, m.value, m.done, m.topic, m.handler)));
      return;
    }
    let ok: boolean[];
    try {
      // Marks of one batch share its token, so the store can send them with one value (see RedisRepository).
      const sorted =
        marks.length > 1 && marks.some((m) => m.value !== marks[0]!.value)
          ? [...marks].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
          : marks;
      const reqs = sorted.map((m) => ({ key: m.key, expected: m.value, value: m.done, ttlMs }));
      const res = await this.persist(() => repository.compareAndSetBatch!(reqs), handler);
      if (sorted === marks) ok = res;
      else {
        const byMark = new Map(sorted.map((m, i) => [m, res[i]!] as const));
        ok = marks.map((m) => byMark.get(m) ?? false);
      }
    } catch (e) {
      this.rec.error(classifyStoreError(e), handler);
      logger(
        `[dedup] could not mark ${marks.length} keys done: ${(e as Error)?.message ?? e}; their leases expire after ${this.claimTtl} ms`,
      );
      return;
    }
    await Promise.all(
      marks.map((m, i) =>
        ok[i]
          ? undefined
          : this.markAfterLostLease(m.key, m.done, m.topic, m.handler).catch((e: unknown) => {
              this.rec.error(classifyStoreError(e), m.handler);
            }),
      ),
    );
  }

  /**
   * The batch's marks as unconditional writes (`markDoneBatch`); one error counted per failed call.
   * The marks a reply says failed (a cluster node down) are sent again like a failed call.
   */
  private async markMany(marks: readonly PendingMark[]): Promise<void> {
    const { repository, ttlMs, logger } = this.o;
    const markDoneBatch = repository.markDoneBatch!.bind(repository);
    const handler = marks[0]!.handler;
    let pending = marks;
    for (let round = 0; ; round++) {
      // `ours`: the store may leave out the keys whose previous value was our own lease (the usual case).
      const reqs = pending.map((m) => ({ key: m.key, value: m.done, ttlMs, ours: m.value }));
      let res: Array<string | null | Error>;
      try {
        res = await this.persist(() => markDoneBatch(reqs), handler);
      } catch (e) {
        this.rec.error(classifyStoreError(e), handler);
        logger(
          `[dedup] could not mark ${pending.length} keys done: ${(e as Error)?.message ?? e}; their leases expire after ${this.claimTtl} ms`,
        );
        return;
      }
      let failed: Error | undefined;
      const again: PendingMark[] = [];
      for (let i = 0; i < pending.length; i++) {
        const r = res[i];
        const m = pending[i]!;
        if (r instanceof Error) {
          failed ??= r;
          again.push(m);
        } else this.checkLease(m.key, m.value, m.done, r ?? null, m.topic, m.handler);
      }
      if (!failed) return;
      this.rec.error(classifyStoreError(failed), handler);
      const wait = MARK_RETRY_PAUSES_MS[round];
      if (wait === undefined) {
        logger(
          `[dedup] could not mark ${again.length} keys done: ${failed.message}; their leases expire after ${this.claimTtl} ms`,
        );
        return;
      }
      await pause(wait);
      pending = again;
    }
  }

  /**
   * The messages of a batch that never ran (it stopped at a nack or was aborted): their pre-claims
   * are released before the batch resolves, so their redelivery finds the keys free. Never throws.
   */
  async releaseNotRun(batch: BatchState, notRun: readonly Message[]): Promise<void> {
    const releases: Promise<unknown>[] = [];
    for (const m of notRun) {
      const i = batch.indexOf(m);
      if (i < 0) continue;
      const key = batch.keys[i];
      if (key === undefined) continue;
      batch.keys[i] = undefined;
      const r = batch.replies[i];
      if (r === null || r === undefined) {
        releases.push(
          this.timed(this.o.repository.compareAndDelete(key, batch.value)).catch((e: unknown) =>
            this.rec.error(classifyStoreError(e), m.context.handler ?? "default"),
          ),
        );
      }
    }
    await Promise.all(releases);
  }

  /** After a failed attempt: deletes the key only if it still holds our token, so the retry runs the handler. */
  async release(key: string, value: string, topic: string, handler: string): Promise<void> {
    try {
      if (await this.persist(() => this.o.repository.compareAndDelete(key, value), handler))
        this.rec.released(topic, handler);
    } catch (e) {
      this.rec.error(classifyStoreError(e), handler);
      this.o.logger(
        `[dedup] could not release ${key} after a handler failure (${(e as Error)?.message ?? e}); it frees itself after ${this.claimTtl} ms`,
      );
    }
  }
}
