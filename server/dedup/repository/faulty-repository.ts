import type { ClaimReply, ClaimRequest, CompareAndSetRequest, DedupRepository, MarkDoneRequest } from "./repository";

/** Faults injected by {@link FaultyRepository}; change them at any time. */
export interface RepositoryFaults {
  /** Added delay before every call, ms. @default 0 */
  latencyMs?: number;
  /** Probability in [0, 1] that a call fails with `error`. @default 0 */
  errorRate?: number;
  /** What a failing call rejects with. @default an Error with code ECONNREFUSED */
  error?: () => Error;
  /** Source of randomness. @default Math.random */
  random?: () => number;
}

/** Defaults of {@link RepositoryFaults}. */
export const DEFAULT_REPOSITORY_FAULTS = {
  latencyMs: 0,
  errorRate: 0,
  error: () => Object.assign(new Error("connect ECONNREFUSED (injected fault)"), { code: "ECONNREFUSED" }),
  random: Math.random,
} as const satisfies Required<RepositoryFaults>;

/**
 * Wraps a repository with injectable latency and errors — for tests, the workshop's store faults
 * and the dashboard's p99 / error-reason panels. Keeps the inner repository's kind and failure mode.
 */
export class FaultyRepository implements DedupRepository {
  faults: Required<RepositoryFaults>;
  /** Calls made, by operation (for tests). */
  readonly calls = {
    claim: 0,
    claimBatch: 0,
    compareAndSet: 0,
    compareAndDelete: 0,
    compareAndSetBatch: 0,
    markDone: 0,
    markDoneBatch: 0,
    extendLease: 0,
  };
  /** Present when the inner repository has it (the Deduplicator then uses it for `done` marks). */
  readonly markDone?: (key: string, value: string, ttlMs: number) => Promise<string | null>;
  /** Present when the inner repository has it (the lease heartbeat's renewal). */
  readonly extendLease?: (key: string, expected: string, ttlMs: number) => Promise<boolean>;
  /** Present when the inner repository has it. */
  readonly markDoneBatch?: (requests: readonly MarkDoneRequest[]) => Promise<ClaimReply[]>;
  /** The inner repository's connection state, when it has one (an injected error is judged by its own code). */
  readonly connectionLostSince?: (since: number) => boolean;

  constructor(
    private readonly inner: DedupRepository,
    faults: RepositoryFaults = {},
  ) {
    this.faults = { ...DEFAULT_REPOSITORY_FAULTS, ...faults };
    if (inner.markDone) {
      const mark = inner.markDone.bind(inner);
      this.markDone = (key, value, ttlMs) => {
        this.calls.markDone++;
        return this.run(() => mark(key, value, ttlMs));
      };
    }
    if (inner.extendLease) {
      const extend = inner.extendLease.bind(inner);
      this.extendLease = (key, expected, ttlMs) => {
        this.calls.extendLease++;
        return this.run(() => extend(key, expected, ttlMs));
      };
    }
    if (inner.connectionLostSince) this.connectionLostSince = inner.connectionLostSince.bind(inner);
    if (inner.markDoneBatch) {
      const markMany = inner.markDoneBatch.bind(inner);
      this.markDoneBatch = (requests) => {
        this.calls.markDoneBatch++;
        return this.run(() => markMany(requests));
      };
    }
  }

  get kind() {
    return this.inner.kind;
  }

  get failureMode() {
    return this.inner.failureMode;
  }

  /** Replaces some faults. */
  set(faults: RepositoryFaults): void {
    const f = { ...this.faults, ...faults };
    if (!(f.latencyMs >= 0)) throw new RangeError("FaultyRepository: latencyMs must be ≥ 0");
    if (!(f.errorRate >= 0 && f.errorRate <= 1)) throw new RangeError("FaultyRepository: errorRate must be in [0, 1]");
    this.faults = f;
  }

  claim(key: string, value: string, ttlMs: number): Promise<string | null> {
    this.calls.claim++;
    return this.run(() => this.inner.claim(key, value, ttlMs));
  }

  claimBatch(requests: readonly ClaimRequest[]): Promise<ClaimReply[]> {
    this.calls.claimBatch++;
    return this.run(() => this.inner.claimBatch(requests));
  }

  compareAndSet(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    this.calls.compareAndSet++;
    return this.run(() => this.inner.compareAndSet(key, expected, value, ttlMs));
  }

  compareAndDelete(key: string, expected: string): Promise<boolean> {
    this.calls.compareAndDelete++;
    return this.run(() => this.inner.compareAndDelete(key, expected));
  }

  compareAndSetBatch(requests: readonly CompareAndSetRequest[]): Promise<boolean[]> {
    this.calls.compareAndSetBatch++;
    const inner = this.inner;
    return this.run(() =>
      inner.compareAndSetBatch
        ? inner.compareAndSetBatch(requests)
        : Promise.all(requests.map((r) => inner.compareAndSet(r.key, r.expected, r.value, r.ttlMs))),
    );
  }

  private async run<T>(call: () => Promise<T>): Promise<T> {
    const { latencyMs, errorRate, error, random } = this.faults;
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
    if (errorRate > 0 && random() < errorRate) throw error();
    return call();
  }
}
