/**
 * What docs/BENCHMARKS.md reports: the row of bench-results.json, and the required figures with
 * their targets, what each measures, what its reference is and which issue asked for it. Data:
 * `npm run bench` stamps the targets on its rows, the renderer lists the figures in this order.
 */

/** One row of bench-results.json. */
export interface BenchResult {
  name: string;
  value: number | null;
  unit: string;
  reference: number | null;
  ratio: number | null;
  /** The target, when the figure has one. */
  target?: number | null;
  /** How `value` is compared with `target`. */
  goal?: "min" | "max" | "abs-max";
  /** What `reference` is. */
  referenceIs?: string;
  /** Which `npm run` step measured it, and the command that reproduces it alone. */
  step?: string;
  command?: string;
  detail?: unknown;
}

/**
 * Targets, their direction, and what each required figure's reference is. The consumer's ratios to
 * raw kafkajs and to the naive peer are reported among the supporting figures, not judged: on a
 * machine where the consumer and Redis share the cores, the floor (one pipelined write per message)
 * is below both earlier targets in the same run, so the floor is the limit ours is measured against.
 */
export const FIGURES: Record<
  string,
  { target: number; goal: "min" | "max" | "abs-max"; referenceIs: string; what: string; source: string }
> = {
  "dedup.batch_claims_vs_redis_benchmark_p64": {
    target: 0.25,
    goal: "min",
    referenceIs: "`redis-benchmark -t set -P 64` SET/s, same run",
    what: "batch claims/s (lease, `Deduplicator.prepareBatch` of 1000) ÷ the reference",
    source: "issue 24",
  },
  "dedup.middleware_overhead_us": {
    target: 3,
    goal: "max",
    referenceIs: "the bare no-op handler, same loop (the figure is the difference); reference column = target",
    what: "µs per message added by the Deduplicator (in-memory repository, lease, metrics on)",
    source: "issue 24",
  },
  "consumer.with_dedup_vs_floor": {
    target: 0.8,
    goal: "min",
    referenceIs:
      "the floor: kafkajs `eachBatch` + one pipelined `SET key 1 NX PX ttl` per message, one pipeline per batch awaited, msgs/s, same run",
    what: "msgs/s of ours (as above) ÷ the least Redis work any Redis-backed dedup must do (medians)",
    source: "issue 24",
  },
  "inspect.scan_keys_per_sec": {
    target: 400_000,
    goal: "min",
    referenceIs: "plain `SCAN MATCH … COUNT 1000` loop keys/s, same keyspace",
    what: "keys/s of the inspector's exact count (1M seeded keys)",
    source: "issue 5",
  },
  "inspect.scan_vs_plain_scan": {
    target: 0.85,
    goal: "min",
    referenceIs: "a plain `SCAN MATCH … COUNT 1000` loop on the same keyspace, same run",
    what: "keys/s of the inspector's exact count (exact no-TTL counts) ÷ the plain SCAN loop's, on a keyspace WITH 10k keys without TTL (every key's TTL read)",
    source: "issue 24",
  },
  "inspect.scan_vs_plain_scan_every_key_has_ttl": {
    target: 0.85,
    goal: "min",
    referenceIs: "a plain `SCAN MATCH … COUNT 1000` loop on the same keyspace, interleaved, same run",
    what: "the same ratio on the same keyspace WITHOUT TTL-less keys (INFO keyspace keys == expires: no per-key TTL read), median of 3 rounds",
    source: "issue 24",
  },
  "inspect.estimate_ms_1m_keys": {
    target: 150,
    goal: "max",
    referenceIs: "the exact count's duration (ms) on the same 1M keys",
    what: "ms of the sampled estimate at 1M keys (median of 5)",
    source: "issue 24",
  },
  "api.overview_p95_ms_50_viewers": {
    target: 100,
    goal: "max",
    referenceIs: "p95 ms with 1 viewer",
    what: "`/api/overview` p95 ms with 50 concurrent viewers",
    source: "issue 5",
  },
  "ui.overview_first_load_js_kb_gz": {
    target: 250,
    goal: "max",
    referenceIs: "First Load JS of `/_not-found` (framework + root layout), same build, KB gzip",
    what: "First Load JS of the overview route `/`, KB gzip (chunks listed by `next build`)",
    source: "issue 6",
  },
  "ui.overview_data_painted_ms": {
    target: 1000,
    goal: "max",
    referenceIs: "ms until the first number alone (stat tile), same loads",
    what: "overview `/`: ms from navigation to the ratio number and its chart line painted — the server's drawing or recharts' (`next start`, live stack, median of 5 cold loads, headless Chromium)",
    source: "issue 15",
  },
  "ui.handler_data_painted_ms": {
    target: 1000,
    goal: "max",
    referenceIs: "ms until the first number alone (stat tile), same loads",
    what: "handler page: ms from navigation to the ratio number and its chart line painted (as above)",
    source: "issue 15",
  },
  "fleet.overview_p95_ms_200_handlers_50_viewers": {
    target: 100,
    goal: "max",
    referenceIs: "one cold refresh of the page's data (overview + its 3 series, empty caches), ms",
    what: "`/api/overview` p95 ms with 200 handlers (20 services × 10) and 50 viewers polling back to back",
    source: "issue 17",
  },
  "fleet.prometheus_queries_200_vs_10_handlers": {
    target: 1,
    goal: "max",
    referenceIs: "Prometheus requests of one refresh with 10 handlers",
    what: "Prometheus requests of one refresh with 200 handlers ÷ with 10 (a fixed set: 1)",
    source: "issue 17",
  },
  "ci.wall_s": {
    target: 900,
    goal: "max",
    referenceIs: "the sum of its phases run one after another (`CI_SERIAL=1` order), same run",
    what: "wall seconds of `bash .ci/run` on a fresh clone (read from test-results/ci-timing.json, which .ci/run writes)",
    source: "issue 24",
  },
  "redis.bytes_per_key_projection_error": {
    target: 0.1,
    goal: "abs-max",
    referenceIs: "measured `used_memory` delta per key (B), lease keys in state `done`",
    what: "capacity projection's bytes/key (inspector sample: `MEMORY USAGE` + dict overhead) ÷ measured − 1",
    source: "issue 9",
  },
  "redis.lease_vs_naive_bytes_per_key": {
    target: 1.3,
    goal: "max",
    referenceIs: "naive marking's measured B/key",
    what: "lease marking's measured B/key ÷ the reference",
    source: "issue 9",
  },
};
