import type { ClaimReply, ClaimRequest, CompareAndSetRequest, DedupRepository, MarkDoneRequest } from "./repository";

/** Options of {@link MemoryRepository}. */
export interface MemoryRepositoryOptions {
  /** A full sweep of expired keys runs on a write at most this often (no timers). @default 10000 */
  sweepIntervalMs?: number;
  /** Refuse new keys beyond this many live keys (a claim then rejects). @default 1000000 */
  maxKeys?: number;
}

/** Defaults of {@link MemoryRepositoryOptions}. */
export const DEFAULT_MEMORY_REPOSITORY_OPTIONS = {
  sweepIntervalMs: 10_000,
  maxKeys: 1_000_000,
} as const satisfies Required<MemoryRepositoryOptions>;

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * An in-process expiring key store with the same atomic semantics as the Redis repository.
 *
 * **Single process only: it does not work across replicas.** After a rebalance moves a partition to
 * another replica, that replica's map is empty and the repeat is processed again (spec §2, §9.4).
 * For tests, the embedded demo and benchmarks of the middleware's own overhead.
 */
export class MemoryRepository implements DedupRepository {
  readonly kind = "memory" as const;
  readonly inProcess = true;
  private readonly map = new Map<string, Entry>();
  private readonly opts: Required<MemoryRepositoryOptions>;
  private lastSweep = Date.now();

  constructor(options: MemoryRepositoryOptions = {}) {
    this.opts = { ...DEFAULT_MEMORY_REPOSITORY_OPTIONS, ...options };
    if (!(this.opts.sweepIntervalMs >= 0)) throw new RangeError("MemoryRepository: sweepIntervalMs must be ≥ 0");
    if (!(Number.isInteger(this.opts.maxKeys) && this.opts.maxKeys > 0))
      throw new RangeError("MemoryRepository: maxKeys must be a positive integer");
  }

  /** Number of live (unexpired) keys. */
  size(): number {
    this.sweep(Date.now(), true);
    return this.map.size;
  }

  /** Current value of a key, or null (for tests and the key browser). */
  get(key: string): string | null {
    return this.live(key, Date.now())?.value ?? null;
  }

  /** Remaining TTL in ms, or -2 when absent (Redis PTTL semantics). */
  pttl(key: string): number {
    const now = Date.now();
    const e = this.live(key, now);
    return e ? e.expiresAt - now : -2;
  }

  /** Deletes a live key (the dashboard's "forget"); true when it was there. */
  forget(key: string): boolean {
    return this.live(key, Date.now()) !== undefined && this.map.delete(key);
  }

  /** Sets a live key's remaining TTL (the dashboard's TTL action); true when it was there. */
  expire(key: string, ttlMs: number): boolean {
    const e = this.live(key, Date.now());
    if (!e) return false;
    e.expiresAt = Date.now() + ttlMs;
    return true;
  }

  /** Live keys with value and expiry (epoch ms), in insertion order; read-only (the dashboard's key browser). */
  *entries(): IterableIterator<{ key: string; value: string; expiresAt: number }> {
    const now = Date.now();
    for (const [key, e] of this.map) if (e.expiresAt > now) yield { key, value: e.value, expiresAt: e.expiresAt };
  }

  claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    try {
      return Promise.resolve(this.claimSync(key, value, ttlMs));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  claimBatch(requests: readonly ClaimRequest[]): Promise<ClaimReply[]> {
    return Promise.resolve(
      requests.map((r) => {
        try {
          return this.claimSync(r.key, r.value, r.ttlMs);
        } catch (e) {
          return e as Error;
        }
      }),
    );
  }

  compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const e = this.live(key, now);
    if (!e || e.value !== expected) return Promise.resolve(false);
    e.value = value;
    e.expiresAt = now + ttlMs;
    return Promise.resolve(true);
  }

  /** Applies every write before it returns (like one Redis script): a claim sent after it sees them all. */
  compareAndSetBatch(requests: readonly CompareAndSetRequest[]): Promise<boolean[]> {
    return Promise.all(requests.map((r) => this.compareAndSet(r.key, r.expected, r.value, r.ttlMs)));
  }

  markDone(key: string, value: string, ttlMs: number): Promise<string | null> {
    return Promise.resolve(this.markDoneSync(key, value, ttlMs));
  }

  /** Applies every mark before it returns (like one Redis pipeline). */
  markDoneBatch(requests: readonly MarkDoneRequest[]): Promise<ClaimReply[]> {
    return Promise.resolve(requests.map((r) => this.markDoneSync(r.key, r.value, r.ttlMs)));
  }

  private markDoneSync(key: string, value: string, ttlMs: number): string | null {
    const now = Date.now();
    const e = this.live(key, now);
    if (e) {
      const prev = e.value;
      e.value = value;
      e.expiresAt = now + ttlMs;
      return prev;
    }
    // A success is recorded even at maxKeys: the key existed until its lease expired.
    this.map.set(key, { value, expiresAt: now + ttlMs });
    return null;
  }

  extendLease(key: string, expected: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const e = this.live(key, now);
    if (!e || e.value !== expected) return Promise.resolve(false);
    e.expiresAt = now + ttlMs;
    return Promise.resolve(true);
  }

  compareAndDelete(key: string, expected: string): Promise<boolean> {
    const e = this.live(key, Date.now());
    if (!e || e.value !== expected) return Promise.resolve(false);
    this.map.delete(key);
    return Promise.resolve(true);
  }

  private claimSync(key: string, value: string, ttlMs: number): string | null {
    const now = Date.now();
    const e = this.live(key, now);
    if (e) return e.value;
    this.sweep(now, false);
    if (this.map.size >= this.opts.maxKeys)
      throw new Error(
        `MemoryRepository: maxKeys (${this.opts.maxKeys}) reached; use the Redis repository or a shorter ttlMs`,
      );
    this.map.set(key, { value, expiresAt: now + ttlMs });
    return null;
  }

  private live(key: string, now: number): Entry | undefined {
    const e = this.map.get(key);
    if (e && e.expiresAt <= now) {
      this.map.delete(key);
      return undefined;
    }
    return e;
  }

  private sweep(now: number, force: boolean): void {
    if (!force && now - this.lastSweep < this.opts.sweepIntervalMs) return;
    this.lastSweep = now;
    for (const [k, e] of this.map) if (e.expiresAt <= now) this.map.delete(k);
  }
}
