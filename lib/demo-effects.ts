/**
 * The live demo's figures since a marker (isomorphic): the page keeps the answer of
 * `GET /api/demo/effects` at the moment the presenter starts from now (or flips a switch) and
 * shows every later answer minus it — so the next demo does not start from the last one's window.
 */
import type { DemoEffectCounts, DemoEffects } from "@/lib/api/demo";

/** What the page shows since its marker. */
export interface EffectsSince {
  /** Seconds between the marker and the latest answer. */
  seconds: number;
  /** Each total's increase since the marker. */
  counts: DemoEffectCounts;
  /** Swallowed copies ÷ finished deliveries since the marker, or null without any. */
  duplicateRatio: number | null;
  /**
   * The histogram bucket the p99 dedup check since the marker falls in, in ms (`low`–`high`;
   * `high` null when above the last bound), or null with no check since the marker.
   */
  p99Bucket: { low: number; high: number | null } | null;
  /** How many checks the p99 is taken over. */
  checks: number;
}

/** The figures of `now` since `mark` (a counter that went down — a restarted process — counts from 0). */
export function effectsSince(mark: DemoEffects, now: DemoEffects): EffectsSince {
  const counts = {} as DemoEffectCounts;
  for (const k of Object.keys(now.counts) as Array<keyof DemoEffectCounts>) {
    const d = now.counts[k] - (mark.counts[k] ?? 0);
    counts[k] = d < 0 ? now.counts[k] : d;
  }
  const before = new Map(mark.checkBuckets.map((b) => [b.le, b.count]));
  const buckets = now.checkBuckets.map((b) => ({ le: b.le, count: Math.max(0, b.count - (before.get(b.le) ?? 0)) }));
  const checks = buckets.find((b) => b.le === null)?.count ?? 0;
  let p99Bucket: EffectsSince["p99Bucket"] = null;
  if (checks > 0) {
    const want = 0.99 * checks;
    let low = 0;
    for (const b of buckets) {
      if (b.count >= want) {
        p99Bucket = { low: low * 1000, high: b.le === null ? null : b.le * 1000 };
        break;
      }
      if (b.le !== null) low = b.le;
    }
  }
  const finished = counts.processed + counts.deduplicated;
  return {
    seconds: Math.max(0, (Date.parse(now.at) - Date.parse(mark.at)) / 1000),
    counts,
    duplicateRatio: finished > 0 ? counts.deduplicated / finished : null,
    p99Bucket,
    checks,
  };
}
