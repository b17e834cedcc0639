/**
 * The Redis key inspector's per-handler answer: counts from the scan (or the estimate), TTLs,
 * states and sizes from each handler's sample, scaled to its count where they were sampled.
 */
import type { HandlerKeys, ScanProgress, TtlBucket } from "@/lib/api/handlers";
import { splitPrefix } from "./glob";
import { splitByState, TTL_BUCKETS, type Accum } from "./accum";
import type { SampleStats } from "./samples";

/**
 * One {@link HandlerKeys} per accumulated prefix, sorted by prefix. `dbNoTtl` is the database's
 * keys without TTL from `INFO keyspace`: 0 proves every handler's no-TTL count is exactly 0.
 */
export function buildHandlers(
  accums: Map<string, Accum>,
  stats: Map<string, SampleStats>,
  exact: boolean,
  bounds: Map<string, number> | null,
  scan: ScanProgress,
  ttl: { bucketsFromSample: boolean; noTtlFromSample: boolean },
  dbNoTtl: number,
): HandlerKeys[] {
  return [...accums.values()]
    .map((a): HandlerKeys => {
      const owner = splitPrefix(a.prefix);
      const s = stats.get(a.prefix);
      // TTLs either came with the keys (every-key scan, or the estimate's draws) or from the
      // handler's uniform sample, scaled to its count.
      const n = s?.size ?? 0;
      const scale = (k: number) => (n > 0 ? Math.round((a.count * k) / n) : 0);
      const ttlFromSample = ttl.bucketsFromSample;
      const counts = ttlFromSample ? TTL_BUCKETS.map((_, i) => scale(s?.buckets[i] ?? 0)) : a.buckets;
      const noTtl = dbNoTtl === 0 ? 0 : ttl.noTtlFromSample ? scale(s?.noTtl ?? 0) : a.noTtl;
      const minTtl = ttlFromSample ? (s?.minTtl ?? -1) : a.minTtl;
      const maxTtl = ttlFromSample ? (s?.maxTtl ?? -1) : a.maxTtl;
      const ttlBuckets: TtlBucket[] = TTL_BUCKETS.map((b, i) => ({
        label: b.label,
        minMs: i === 0 ? 0 : (TTL_BUCKETS[i - 1]!.maxMs ?? 0),
        maxMs: b.maxMs,
        count: counts[i] ?? 0,
        // Leases of the sample scaled like the bucket itself (never more than the bucket holds).
        processing: Math.min(counts[i] ?? 0, scale(s?.leaseBuckets[i] ?? 0)),
      }));
      const split = splitByState(a.count, s?.states ?? { processing: 0, done: 0, marked: 0, other: 0 }, n, exact);
      return {
        service: owner.service,
        handler: owner.handler,
        prefix: a.prefix,
        keyCount: a.count,
        exact,
        errorBound: exact ? 0 : (bounds?.get(a.prefix) ?? 0),
        noTtlCount: noTtl,
        noTtlExact: dbNoTtl === 0 || (exact && !ttl.noTtlFromSample),
        ttlSampled: ttlFromSample || !exact,
        ttlBuckets,
        bytesPerKey: s?.bytesPerKey ?? null,
        states: s?.states ?? { processing: 0, done: 0, marked: 0, other: 0 },
        sampleSize: s?.size ?? 0,
        byState: {
          processing: split.processing,
          done: split.done,
          marked: split.marked,
          other: split.other,
          exact: split.exact,
        },
        leaseShare: split.leaseShare,
        settledMinTtlMs: s && s.settledMinTtl >= 0 ? s.settledMinTtl : null,
        countedAt: scan.finishedAt ?? new Date().toISOString(),
        ttlObserved: maxTtl >= 0 ? { minMs: minTtl, maxMs: maxTtl, p50Ms: s?.ttlP50 ?? maxTtl } : null,
        scan,
      };
    })
    .sort((x, y) => x.prefix.localeCompare(y.prefix));
}
