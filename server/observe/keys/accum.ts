import type { AggregateReply, PrefixTotals } from "./scripts";

/** Running per-prefix totals of the inspector, and the TTL buckets and estimate math they use. */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/**
 * TTL bucket upper bounds: they split the three windows of spec §3 — ≤ 1 h analytics, 24 h default,
 * 7 d critical — and flag what is below the 10-minute minimum.
 */
export const TTL_BUCKETS: ReadonlyArray<{ label: string; maxMs: number | null }> = [
  { label: "< 10 min", maxMs: 10 * MIN },
  { label: "10 min – 1 h", maxMs: HOUR },
  { label: "1 – 6 h", maxMs: 6 * HOUR },
  { label: "6 – 24 h", maxMs: DAY },
  { label: "1 – 3 d", maxMs: 3 * DAY },
  { label: "3 – 7 d", maxMs: 7 * DAY },
  { label: "> 7 d", maxMs: null },
];
/** Upper bounds (ms) of the finite buckets, as the scripts take them. */
export const TTL_BUCKET_BOUNDS = TTL_BUCKETS.flatMap((b) => (b.maxMs === null ? [] : [b.maxMs]));

/**
 * z of the estimate's stated bound: 3.29 = two-sided 99.9%, so that with several handlers on a
 * page the bound holds for all of them at once (at 95%, one of five would miss one time in four).
 */
export const ESTIMATE_Z = 3.29;

/** Totals of one handler prefix (counts, TTL stats, a reservoir of sample keys with their master). */
export interface Accum extends PrefixTotals {
  /** Reservoir of sample keys with the master they live on. */
  samples: Array<{ key: string; node: number }>;
  offered: number;
}

/** The accumulator of `prefix`, created empty on first use. */
export function getAccum(m: Map<string, Accum>, prefix: string): Accum {
  let a = m.get(prefix);
  if (!a) {
    a = {
      prefix,
      count: 0,
      noTtl: 0,
      minTtl: -1,
      maxTtl: -1,
      buckets: TTL_BUCKETS.map(() => 0),
      samples: [],
      offered: 0,
    };
    m.set(prefix, a);
  }
  return a;
}

/** Smaller of two TTLs where -1 means none. */
export function minTtl(a: number, b: number): number {
  if (a < 0) return b;
  if (b < 0) return a;
  return Math.min(a, b);
}

/** Adds `from`'s totals into `into`, its counts scaled by `scale` (keys per draw of an estimate; 1 for a count). */
export function addTotals(into: PrefixTotals, from: PrefixTotals, scale = 1): void {
  into.count += from.count * scale;
  into.noTtl += from.noTtl * scale;
  for (let i = 0; i < into.buckets.length; i++) into.buckets[i]! += (from.buckets[i] ?? 0) * scale;
  into.minTtl = minTtl(into.minTtl, from.minTtl);
  into.maxTtl = Math.max(into.maxTtl, from.maxTtl);
}

/**
 * Adds one script reply's groups into `accums`; sample keys go through a reservoir of `limits.samples`
 * per prefix; beyond `limits.handlers` distinct prefixes keys are counted under `(other)`.
 */
export function mergeReply(
  accums: Map<string, Accum>,
  r: AggregateReply,
  node: number,
  limits: { handlers: number; samples: number },
): void {
  for (const g of r.groups) {
    const prefix = accums.has(g.prefix) || accums.size < limits.handlers ? g.prefix : "(other)";
    const a = getAccum(accums, prefix);
    addTotals(a, g);
    for (const key of g.samples) offerSample(a, key, node, limits.samples);
  }
}

/** Offers `key` to `a`'s reservoir of at most `limit` sample keys (uniform over the keys offered). */
export function offerSample(a: Accum, key: string, node: number, limit: number): void {
  a.offered++;
  if (a.samples.length < limit) a.samples.push({ key, node });
  else {
    const j = Math.floor(Math.random() * a.offered);
    if (j < a.samples.length) a.samples[j] = { key, node };
  }
}

/**
 * Combines per-master sampled keys (blocks from random SCAN cursors) into counts:
 * count_g = Σ_m size_m · k_gm / n_m, with a {@link ESTIMATE_Z} bound from the binomial variance Σ_m size_m² · p(1-p) / n_m (plus, for a master
 * where the prefix drew nothing, -ln(0.001)·size/n).
 */
export function scaleEstimate(perNode: ReadonlyArray<{ draws: number; size: number; accums: Map<string, Accum> }>): {
  accums: Map<string, Accum>;
  bounds: Map<string, number>;
  draws: number;
} {
  const accums = new Map<string, Accum>();
  const variance = new Map<string, number>();
  const zeroHitBound = new Map<string, number>();
  let draws = 0;
  for (const { draws: n, size, accums: a } of perNode) {
    draws += n;
    if (n === 0) continue;
    const f = size / n;
    for (const g of a.values()) {
      const t = getAccum(accums, g.prefix);
      addTotals(t, g, f);
      t.samples.push(...g.samples);
      t.offered += g.offered;
      const p = g.count / n;
      variance.set(g.prefix, (variance.get(g.prefix) ?? 0) + (size * size * (p * (1 - p))) / n);
    }
  }
  // A master where a prefix drew no hit still contributes uncertainty: -ln(0.001) ≈ 6.9 (99.9%).
  for (const prefix of accums.keys()) {
    let extra = 0;
    for (const { draws: n, size, accums: a } of perNode) if (n > 0 && !a.has(prefix)) extra += (6.91 * size) / n;
    zeroHitBound.set(prefix, extra);
  }
  const bounds = new Map<string, number>();
  for (const [prefix, v] of variance)
    bounds.set(prefix, Math.ceil(ESTIMATE_Z * Math.sqrt(v) + (zeroHitBound.get(prefix) ?? 0)));
  for (const t of accums.values()) {
    t.count = Math.round(t.count);
    t.noTtl = Math.round(t.noTtl);
    t.buckets = t.buckets.map(Math.round);
  }
  return { accums, bounds, draws };
}

/** Per-call count of the first call: small, so a keyspace of expensive keys never starts with a slow call. */
export function firstCount(max: number): number {
  return Math.min(max, 250);
}

/** Next per-call count: halve when a call took more than the budget, grow ×1.5 while below half of it. */
export function adapt(count: number, micros: number, budget: number, max: number): number {
  if (micros > budget) return Math.max(50, Math.floor(count / 2));
  if (micros < budget / 2) return Math.min(max, Math.ceil(count * 1.5));
  return count;
}

/** `keys − expires` of database `db` from an `INFO keyspace` reply (0 when the db is empty). */
export function keysWithoutTtl(info: string, db: number): number {
  const m = new RegExp(`^db${db}:keys=(\\d+),expires=(\\d+)`, "m").exec(info);
  return m ? Number(m[1]) - Number(m[2]) : 0;
}

/** Counts of one handler's keys by state, and the leases' share. */
export interface StateSplit {
  processing: number;
  done: number;
  marked: number;
  other: number;
  /** The sample held every key, so the split is a count, not a scaled share. */
  exact: boolean;
  /** processing ÷ all (0..1); `null` without a sample. */
  leaseShare: number | null;
}

/**
 * Splits `count` keys by the states of a uniform sample of `sampled` of them: each state's share
 * scaled to the count, `done` taking the rounding so the parts add up to `count`. Exact when the
 * sample was every key of an exact count.
 */
export function splitByState(
  count: number,
  states: Readonly<Record<"processing" | "done" | "marked" | "other", number>>,
  sampled: number,
  exactCount: boolean,
): StateSplit {
  if (sampled <= 0)
    return { processing: 0, done: count, marked: 0, other: 0, exact: count === 0, leaseShare: count === 0 ? 0 : null };
  const part = (k: number) => Math.round((count * k) / sampled);
  const processing = part(states.processing);
  const marked = part(states.marked);
  const other = part(states.other);
  return {
    processing,
    marked,
    other,
    done: Math.max(0, count - processing - marked - other),
    exact: exactCount && sampled >= count,
    leaseShare: states.processing / sampled,
  };
}
