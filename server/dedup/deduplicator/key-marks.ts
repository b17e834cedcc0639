import type { BatchState, PendingMark } from "./batch-state";
import type { Message } from "../message";
import { classifyStoreError } from "../repository/store-call";
import { MARK_RETRY_PAUSES_MS, MarkWrites, pause } from "./mark-writes";

/**
 * The Deduplicator's writes after the claim: renew, `done` (one or a batch), release. None of them
 * throws — the handler's outcome is already decided; failures are counted and logged. A failed
 * `done` mark or release is tried again ({@link MARK_RETRY_PAUSES_MS}).
 */
export class KeyMarks extends MarkWrites {
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
