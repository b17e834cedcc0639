/**
 * Cost limits of the key browser and the UUID lookup: one Redis-call budget per second
 * shared by all readers (the key actions have their own, {@link actionBudget}), one browse call in flight at a time (so a `PING` of the dedup checks never
 * queues behind more than one browse call on the shared Redis), and a per-client concurrency limit.
 * Exhausted → {@link RateLimitedError} (429 + `Retry-After`).
 */
import { RateLimitedError } from "../core/errors";

/** Options of {@link RedisBudget}. */
export interface RedisBudgetOptions {
  /** Calls per second refilled into the bucket. @default 60 */
  callsPerSecond: number;
  /** Bucket size: the most calls in a burst (one page may make up to 40 SCANs). @default 40 */
  burst: number;
  /** Calls running at once; the others wait their turn. @default 1 */
  maxInFlight: number;
  /** How long a caller waits for a token before it is told to retry. @default 250 */
  maxWaitMs: number;
}

/** Defaults of {@link RedisBudgetOptions}. */
export const DEFAULT_REDIS_BUDGET_OPTIONS: RedisBudgetOptions = {
  callsPerSecond: 60,
  burst: 40,
  maxInFlight: 1,
  maxWaitMs: 250,
};

/** A token bucket of Redis calls with a cap on calls in flight. */
export class RedisBudget {
  readonly opts: RedisBudgetOptions;
  private tokens: number;
  private last: number;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    opts: Partial<RedisBudgetOptions> = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.opts = { ...DEFAULT_REDIS_BUDGET_OPTIONS, ...opts };
    const o = this.opts;
    if (!(o.callsPerSecond > 0 && o.callsPerSecond <= 100_000))
      throw new RangeError(`callsPerSecond: expected 1..100000, got ${o.callsPerSecond}`);
    if (!(o.burst >= 1 && o.burst <= 100_000)) throw new RangeError(`burst: expected 1..100000, got ${o.burst}`);
    if (!(Number.isInteger(o.maxInFlight) && o.maxInFlight >= 1 && o.maxInFlight <= 1000))
      throw new RangeError(`maxInFlight: expected 1..1000, got ${o.maxInFlight}`);
    if (!(o.maxWaitMs >= 0 && o.maxWaitMs <= 10_000))
      throw new RangeError(`maxWaitMs: expected 0..10000, got ${o.maxWaitMs}`);
    this.tokens = o.burst;
    this.last = this.now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((t - this.last) / 1000) * this.opts.callsPerSecond);
    this.last = t;
  }

  /** Takes `n` tokens if the bucket has them now; never waits. */
  tryTake(n = 1): boolean {
    this.refill();
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }

  /** Whole seconds until `n` tokens are back (≥ 1: the `Retry-After` value). */
  retryAfterSeconds(n = 1): number {
    this.refill();
    return Math.max(1, Math.ceil((n - this.tokens) / this.opts.callsPerSecond));
  }

  /**
   * Takes `n` tokens, waiting up to `waitMs` for them: true when taken, false (nothing taken) when
   * they would not be back in time. Waiting costs Redis nothing: the refill rate bounds the calls.
   */
  async takeWithin(n: number, waitMs: number): Promise<boolean> {
    if (n > this.opts.burst) return false;
    const deadline = this.now() + Math.max(0, waitMs);
    while (!this.tryTake(n)) {
      const needMs = ((n - this.tokens) / this.opts.callsPerSecond) * 1000;
      if (this.now() + needMs > deadline) return false;
      await new Promise((r) => setTimeout(r, Math.max(1, Math.ceil(needMs))));
    }
    return true;
  }

  /** Takes `n` tokens, waiting up to `maxWaitMs` for them; else throws {@link RateLimitedError}. */
  async take(n = 1): Promise<void> {
    if (n > this.opts.burst)
      throw new RateLimitedError(
        `needs ${n} Redis calls at once, more than the budget's burst of ${this.opts.burst}`,
        1,
      );
    if (!(await this.takeWithin(n, this.opts.maxWaitMs))) {
      throw new RateLimitedError(
        `the key browser's Redis budget (${this.opts.callsPerSecond} calls/s shared by all viewers) is spent; retry after the Retry-After seconds`,
        this.retryAfterSeconds(n),
      );
    }
  }

  /** Runs `fn` once fewer than `maxInFlight` budgeted calls are running (FIFO). Takes no token. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.opts.maxInFlight) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
    try {
      return await fn();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }
}

/** Per-client limit on requests in progress. */
export class ClientConcurrency {
  private readonly active = new Map<string, number>();

  constructor(readonly limit: number) {
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100))
      throw new RangeError(`limit: expected 1..100, got ${limit}`);
  }

  /**
   * Runs `fn` for `client`; when it already has `limit` in progress, waits up to `waitMs` for one to
   * end (a client that does not wait for its answers is slowed down, not served at once), then throws
   * {@link RateLimitedError}.
   */
  async run<T>(client: string, fn: () => Promise<T>, waitMs = 250): Promise<T> {
    const deadline = Date.now() + waitMs;
    while ((this.active.get(client) ?? 0) >= this.limit) {
      if (Date.now() >= deadline)
        throw new RateLimitedError(
          `at most ${this.limit} key-browser requests in progress per client; wait for the previous one`,
          1,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
    const n = this.active.get(client) ?? 0;
    this.active.set(client, n + 1);
    try {
      return await fn();
    } finally {
      const left = (this.active.get(client) ?? 1) - 1;
      if (left > 0) this.active.set(client, left);
      else this.active.delete(client);
    }
  }
}

/** Per-client concurrency of `/api/keys` and `/api/keys/lookup` together. */
export const KEYS_PER_CLIENT_CONCURRENCY = 2;

type G = typeof globalThis & {
  __dedupHealthBrowseBudget?: RedisBudget;
  __dedupHealthActionBudget?: RedisBudget;
  __dedupHealthBrowseClients?: ClientConcurrency;
};

/** The process's budget of key-browser/lookup Redis calls (on globalThis: shared by Next's module copies). */
export function browseBudget(): RedisBudget {
  const g = globalThis as G;
  g.__dedupHealthBrowseBudget ??= new RedisBudget();
  return g.__dedupHealthBrowseBudget;
}

/** The process's per-client limiter of key-browser/lookup requests. */
export function browseClients(): ClientConcurrency {
  const g = globalThis as G;
  g.__dedupHealthBrowseClients ??= new ClientConcurrency(KEYS_PER_CLIENT_CONCURRENCY);
  return g.__dedupHealthBrowseClients;
}

/**
 * The process's budget of key-ACTION Redis calls (forget, TTL, their dry runs: callers allowed to
 * change state), apart from the readers' {@link browseBudget}: anonymous key-browser readers spent
 * the one shared budget and made an operator's forget dry run go from 2.7 s to 36 s and
 * `complete: false`. The same rate and burst; with it, at most two budgeted calls run on the shared
 * Redis at once (one reader's, one action's).
 */
export function actionBudget(): RedisBudget {
  const g = globalThis as G;
  g.__dedupHealthActionBudget ??= new RedisBudget();
  return g.__dedupHealthActionBudget;
}
