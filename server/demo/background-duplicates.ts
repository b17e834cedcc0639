/**
 * The embedded demo's background of duplicates, inside the "normal < 1 %" band, by the real
 * mechanisms (spec §1), with no toggle touched:
 * - **producer retries**: now and then the producer's ack is lost and it sends the same record
 *   again (same UUID, same payload, a new offset: cause `republish`). Counted per event type, so
 *   each handler's share stays below 1 %: the first retry after `firstAfter` of its messages
 *   (1/121 < 1 %, ~50 s into a first run at the default 5 msgs/s), then one every
 *   `gapMin`..`gapMax` of them (0.25-0.5 %);
 * - **a rare redelivery**: every `restartEveryMs` (random in the range) a replica joins, processes
 *   a batch and exits before committing, so its records are delivered again (cause `redelivery`):
 *   a few seconds of one replica's partitions, ~0.3 % of a 5-minute window.
 * The workshop's toggles (`setSources`) add their own sources on top and push the ratio past 10 %.
 */
import type { Message } from "@/server/dedup";
import { EVENT_TYPE_KEY } from "@/names/dedup";

/** Options of {@link BackgroundDuplicates}. */
export interface BackgroundDuplicatesOptions {
  /** Messages of one event type before its first producer retry. @default 120 */
  firstAfter: number;
  /** Messages of one event type between two producer retries, drawn uniformly. @default 200..400 */
  gapMin: number;
  gapMax: number;
  /** Delay before the retry is sent (the producer's ack timeout). @default 200 */
  ackTimeoutMs: number;
  /** Time between two restarts before commit, drawn uniformly. @default 10..20 min */
  restartEveryMs: readonly [number, number];
}

/** Defaults of {@link BackgroundDuplicatesOptions}. */
export const DEFAULT_BACKGROUND_DUPLICATES: BackgroundDuplicatesOptions = {
  firstAfter: 120,
  gapMin: 200,
  gapMax: 400,
  ackTimeoutMs: 200,
  restartEveryMs: [10 * 60_000, 20 * 60_000],
};

/** Decides which published records the producer sends again, and when the next rare restart comes. */
export class BackgroundDuplicates {
  readonly opts: BackgroundDuplicatesOptions;
  private readonly left = new Map<string, number>();

  constructor(
    opts: Partial<BackgroundDuplicatesOptions> = {},
    private readonly rand: () => number = Math.random,
  ) {
    this.opts = { ...DEFAULT_BACKGROUND_DUPLICATES, ...opts };
    const o = this.opts;
    if (!(o.firstAfter >= 1 && o.gapMin >= 1 && o.gapMax >= o.gapMin))
      throw new RangeError("BackgroundDuplicates: expected firstAfter ≥ 1 and 1 ≤ gapMin ≤ gapMax");
  }

  /** The records of a published batch whose ack is lost: the producer re-sends them (same UUID and payload). */
  retries(msgs: readonly Message[]): Message[] {
    const out: Message[] = [];
    for (const m of msgs) {
      const type = m.metadata[EVENT_TYPE_KEY] ?? "";
      const n = (this.left.get(type) ?? this.opts.firstAfter) - 1;
      if (n > 0) {
        this.left.set(type, n);
        continue;
      }
      out.push({ ...m, metadata: { ...m.metadata }, context: {} });
      this.left.set(type, this.opts.gapMin + Math.floor(this.rand() * (this.opts.gapMax - this.opts.gapMin + 1)));
    }
    return out;
  }

  /** Milliseconds until the next restart before commit. */
  nextRestartMs(): number {
    const [lo, hi] = this.opts.restartEveryMs;
    return lo + this.rand() * (hi - lo);
  }
}
