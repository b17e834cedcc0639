import type { DedupRepository, FailureMode } from "./repository";

function withMode(repo: DedupRepository, failureMode: FailureMode): DedupRepository {
  return {
    kind: repo.kind,
    failureMode,
    inProcess: repo.inProcess,
    claim: (k, v, t) => repo.claim(k, v, t),
    claimBatch: (reqs) => repo.claimBatch(reqs),
    compareAndSet: (k, e, v, t) => repo.compareAndSet(k, e, v, t),
    compareAndDelete: (k, e) => repo.compareAndDelete(k, e),
    ...(repo.compareAndSetBatch ? { compareAndSetBatch: repo.compareAndSetBatch.bind(repo) } : {}),
    ...(repo.extendLease ? { extendLease: repo.extendLease.bind(repo) } : {}),
    ...(repo.markDone ? { markDone: repo.markDone.bind(repo) } : {}),
    ...(repo.markDoneBatch ? { markDoneBatch: repo.markDoneBatch.bind(repo) } : {}),
    ...(repo.connectionLostSince ? { connectionLostSince: repo.connectionLostSince.bind(repo) } : {}),
  };
}

/**
 * Fail-open (spec §4, the default): when a store call fails or exceeds `timeoutMs`, the
 * Deduplicator lets the message through to the handler unchecked and counts
 * `deduplication_errors_total`. The service keeps consuming; **a repeat can reach the handler**,
 * which must then be idempotent itself (spec §5).
 *
 * A thin helper in the spec's words: the same as the Deduplicator option `failureMode: "open"`
 * (the repository only carries the choice to the Deduplicator built on it).
 */
export function failOpen(repo: DedupRepository): DedupRepository {
  return withMode(repo, "open");
}

/**
 * Fail-closed (spec §4): a store failure or timeout becomes the handler's error (`DedupStoreError`):
 * Retry runs again and, once the retries are spent, PoisonQueue sends the message to the DLQ. For
 * handlers where a duplicate costs money or cannot be undone.
 *
 * The same as the Deduplicator option `failureMode: "closed"` (see {@link failOpen}).
 */
export function failClosed(repo: DedupRepository): DedupRepository {
  return withMode(repo, "closed");
}
