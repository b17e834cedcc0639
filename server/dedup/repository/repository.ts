/**
 * The store seam of the Deduplicator. Watermill's peer is `ExpiringKeyRepository.IsDuplicate`,
 * which checks and inserts in one call and cannot delete; ours adds the two single-key
 * compare-and-* operations the lease protocol needs (spec §10).
 *
 * Every operation touches exactly ONE key, so a Redis implementation works on Redis Cluster
 * without hash tags (no CROSSSLOT).
 */

/** What a repository is, for the lint (`in-memory` with replicas > 1 is a finding). */
export type RepositoryKind = "redis" | "memory" | "postgres-inbox" | "custom";

/** What the Deduplicator does when a store call fails or times out (spec §4). */
export type FailureMode = "open" | "closed";

/** One claim of a batch. */
export interface ClaimRequest {
  key: string;
  value: string;
  ttlMs: number;
}

/** Per-claim reply of a batch: `null` = claimed, a string = the value already there, an `Error` = that claim failed. */
export type ClaimReply = string | null | Error;

/**
 * An expiring key store with atomic single-key operations.
 *
 * Implementations: `RedisRepository` (shared by all replicas: the production choice) and
 * `MemoryRepository` (single process only). The failure mode (spec §4, default open) is the
 * Deduplicator's `failureMode` option; `failOpen` / `failClosed` mark a repository with it instead.
 */
export interface DedupRepository {
  /** The kind of store, for lint and dashboards. */
  readonly kind: RepositoryKind;
  /** Failure mode chosen with `failOpen` / `failClosed`: the default of the Deduplicator's `failureMode` option; absent = open. */
  readonly failureMode?: FailureMode;
  /** True when calls never wait on I/O (the in-memory repository): `timeoutMs` is then not applied. */
  readonly inProcess?: boolean;
  /**
   * Atomically: if `key` is absent, set it to `value` with a TTL of `ttlMs` and resolve `null`;
   * otherwise leave it and resolve with its current value. (Redis: `SET key value NX PX ttl GET`.)
   */
  claim(key: string, value: string, ttlMs: number): Promise<string | null>;
  /**
   * {@link claim} for many keys in one round trip (Redis: one pipeline; on a Cluster one pipeline
   * per node, in parallel). Replies are in request order; a failed claim is an `Error` in its slot
   * and does not fail the others. Rejects only if the whole batch could not be sent.
   */
  claimBatch(requests: readonly ClaimRequest[]): Promise<ClaimReply[]>;
  /** Atomically: if `key` holds `expected`, set it to `value` with TTL `ttlMs` and resolve true; else false. */
  compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean>;
  /** Atomically: if `key` holds `expected`, delete it and resolve true; else false. */
  compareAndDelete(key: string, expected: string): Promise<boolean>;
  /**
   * Optional: the lease heartbeat's renewal — atomically, if `key` still holds `expected` (our claim
   * token), reset its TTL to `ttlMs` without rewriting the value and resolve true; else (taken over,
   * or expired and gone) leave it and resolve false. Redis: a one-key script (`GET` then `PEXPIRE`).
   * Without it the Deduplicator renews with {@link compareAndSet} of the token onto itself.
   */
  extendLease?(key: string, expected: string, ttlMs: number): Promise<boolean>;
  /**
   * Optional: {@link compareAndSet} for many keys in one round trip, results in request order.
   * The Deduplicator uses it for the `done` marks of a batch; without it, it sends them one by one
   * (concurrently).
   *
   * **Ordering.** The Router does not wait for a batch's marks before the transport hands it the
   * next batch (the transport waits before it commits, `MessageSink.flush`). Issue the writes before
   * returning the promise — one Redis connection executes them before the next batch's claim, as
   * {@link RedisRepository} and {@link MemoryRepository} do — so a copy of a marked key in the next
   * batch is swallowed. A store that writes later is still safe: the copy finds the batch's lease,
   * fails as in progress, and is redelivered once the mark landed (a nack and a delay instead).
   */
  compareAndSetBatch?(requests: readonly CompareAndSetRequest[]): Promise<boolean[]>;
  /**
   * Optional: the `done` mark after a handler success — set `key` to `value` with TTL `ttlMs`
   * **unconditionally** and resolve the value it held before (null when absent). Redis: `SET key
   * value PX ttl GET`, one native command. Once the handler succeeded, `done` is a fact whoever holds
   * the lease now: a second owner that took an expired lease and then fails finds `done`, its
   * compare-and-delete does not remove it, and later copies are swallowed. The previous value tells
   * whether the lease was still ours (`deduplication_lease_lost_total` otherwise). Without it the
   * Deduplicator falls back to {@link compareAndSet}.
   */
  markDone?(key: string, value: string, ttlMs: number): Promise<string | null>;
  /**
   * Optional: {@link markDone} for many keys in one round trip (the `done` marks of a batch);
   * previous values in request order, a failed mark is an `Error` in its slot. Issue the writes
   * before returning the promise (the ordering note of {@link compareAndSetBatch}).
   */
  markDoneBatch?(requests: readonly MarkDoneRequest[]): Promise<ClaimReply[]>;
  /**
   * Optional: true when the store's connection was not ready at some moment since `since` (a
   * `performance.now()` value) — it was closed, refused, reconnecting or never up. The Deduplicator
   * asks it after a failed or timed-out call, so a stopped store is counted `redis_conn`, not
   * `redis_timeout`, however long the call waited (`RedisRepository` reads the client's `status` and
   * its `close`/`ready` events).
   */
  connectionLostSince?(since: number): boolean;
}

/** One unconditional `done` mark of a batch ({@link DedupRepository.markDoneBatch}). */
export interface MarkDoneRequest {
  key: string;
  value: string;
  ttlMs: number;
  /**
   * Our lease token on the key, if any: where the previous value equals it (the lease was still
   * ours, the usual case) a store may answer `null` instead, sparing the reply (RedisRepository's
   * batch script then returns only the keys whose previous value was someone else's).
   */
  ours?: string;
}

/** One compare-and-set of a batch. */
export interface CompareAndSetRequest {
  key: string;
  expected: string;
  value: string;
  ttlMs: number;
}
