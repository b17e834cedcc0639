/**
 * A bound on guessing `WORKSHOP_TOKEN`: wrong tokens are counted in one bucket for all callers
 * (a per-caller count would key on a forwarded address the caller can forge). While the bucket is
 * empty, no presented token is compared at all — the answer is 429 with `Retry-After`, so a guess
 * during that time learns nothing. **Hazard**: a client hammering wrong tokens holds the right one
 * back too for as long as it keeps going; with a token of ≥ 16 characters guessing is hopeless
 * anyway, this only keeps a scan from running unthrottled.
 */

/** Wrong tokens allowed in a burst, and refilled per second. */
export const TOKEN_FAILURES = { burst: 20, perSecond: 0.5 } as const;

/** The process's bucket of wrong-token allowances (kept on globalThis: modules load more than once). */
export class TokenFailureBudget {
  private tokens: number = TOKEN_FAILURES.burst;
  private last: number;

  constructor(private readonly now: () => number = Date.now) {
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(TOKEN_FAILURES.burst, this.tokens + ((t - this.last) / 1000) * TOKEN_FAILURES.perSecond);
    this.last = t;
  }

  /** Seconds until a token may be tried again; 0 when one may be now. */
  retryAfterSeconds(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - this.tokens) / TOKEN_FAILURES.perSecond));
  }

  /** Counts one wrong token. */
  failed(): void {
    this.refill();
    this.tokens = Math.max(0, this.tokens - 1);
  }
}

/** The process's {@link TokenFailureBudget}. */
export function tokenFailures(): TokenFailureBudget {
  const g = globalThis as typeof globalThis & { __dedupHealthTokenFailures?: TokenFailureBudget };
  g.__dedupHealthTokenFailures ??= new TokenFailureBudget();
  return g.__dedupHealthTokenFailures;
}
