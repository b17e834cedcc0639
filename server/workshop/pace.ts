/**
 * A narrated run's publishing pace: every message a scenario publishes waits for its slot, one
 * every `NARRATED_GAP_MS`, so each delivery reaches the timeline as it happens instead of in one
 * burst. A fast run has no slots (a batch goes out at once).
 */
import { NARRATED_GAP_MS, type RunPace } from "@/lib/api/workshop";

/** Hands out publish slots for one run. */
export class PublishPacer {
  private next = 0;

  constructor(
    readonly pace: RunPace,
    private readonly gapMs = NARRATED_GAP_MS,
  ) {}

  /** Whether messages go out one by one. */
  get paced(): boolean {
    return this.pace === "narrated";
  }

  /** How long the next message waits for its slot, ms (0 in a fast run); takes the slot. */
  take(now = Date.now()): number {
    if (!this.paced) return 0;
    const slot = Math.max(now, this.next);
    this.next = slot + this.gapMs;
    return slot - now;
  }
}
