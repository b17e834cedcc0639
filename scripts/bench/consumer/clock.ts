/** The clock of one consume of the whole topic: messages/s counts from the first to the last message. */

/** One consume's figures: messages seen, first → last message, connect + group join included, msgs/s. */
export interface ConsumeFigures {
  messages: number;
  /** First to last message. */
  seconds: number;
  /** Including connect + group join. */
  wallSeconds: number;
  perSec: number;
}

/**
 * Counts consumed messages towards `n` from now: the times of the first and of the `n`th message
 * (`finished` resolves then) give a round's throughput, so group join and the final idle fetch
 * are not counted.
 */
export function arrivals(n: number) {
  const t0 = performance.now();
  let first = 0;
  let last = 0;
  let count = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  return {
    finished,
    /** `k` more messages consumed. */
    seen(k: number): void {
      if (count === 0) first = performance.now();
      count += k;
      if (count >= n && last === 0) {
        last = performance.now();
        finish();
      }
    },
    result(): ConsumeFigures {
      return {
        messages: count,
        seconds: (last - first) / 1000,
        wallSeconds: (last - t0) / 1000,
        perSec: count / ((last - first) / 1000),
      };
    },
  };
}

/** The arrival counter of one consume. */
export type Arrivals = ReturnType<typeof arrivals>;
