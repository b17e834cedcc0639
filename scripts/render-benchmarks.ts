/**
 * Renders docs/BENCHMARKS.md from bench-results.json (written by `npm run bench`).
 *
 *   npx tsx scripts/render-benchmarks.ts [--in bench-results.json] [--out docs/BENCHMARKS.md]
 *
 * Every figure comes from the results file; the prose around it only says how to read it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { arg } from "./lib/args";

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

/** Targets, their direction, and what each required figure's reference is. */
export const FIGURES: Record<string, { target: number; goal: "min" | "max" | "abs-max"; referenceIs: string; what: string; source: string }> = {
  "dedup.batch_claims_vs_redis_benchmark_p64": {
    target: 0.25,
    goal: "min",
    referenceIs: "`redis-benchmark -t set -P 64` SET/s, same run",
    what: "batch claims/s (lease, `Deduplicator.prepareBatch` of 1000) ÷ the reference",
    source: "issue 3",
  },
  "dedup.middleware_overhead_us": {
    target: 3,
    goal: "max",
    referenceIs: "the bare no-op handler, same loop (the figure is the difference); reference column = target",
    what: "µs per message added by the Deduplicator (in-memory repository, lease, metrics on)",
    source: "issue 3",
  },
  "consumer.with_dedup_vs_raw_kafkajs": {
    target: 0.5,
    goal: "min",
    referenceIs: "raw kafkajs `eachBatch` + no-op, msgs/s, same topic, alternating rounds",
    what: "msgs/s of KafkaSubscriber + default stack + Redis Deduplicator ÷ the reference (medians)",
    source: "issue 15; 0.8 in issue 9",
  },
  "consumer.with_dedup_vs_floor": {
    target: 0.8,
    goal: "min",
    referenceIs: "the floor: kafkajs `eachBatch` + one pipelined `SET key 1 NX PX ttl` per message, one pipeline per batch awaited, msgs/s, same run",
    what: "msgs/s of ours (as above) ÷ the least Redis work any Redis-backed dedup must do (medians)",
    source: "issue 15",
  },
  "consumer.with_dedup_vs_naive_peer": {
    target: 4,
    goal: "min",
    referenceIs: "the naive peer: kafkajs `eachMessage` + `await redis.set(key, \"1\", \"PX\", ttl, \"NX\")` per message, every partition at once, msgs/s, same run",
    what: "msgs/s of ours ÷ what a user writes from the seed's snippet (medians)",
    source: "issue 15",
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
    source: "issue 15",
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
    source: "issue 5",
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
    source: "issue 15",
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

/** "met" / "missed by …" for a figure with a target. */
export function verdict(r: Pick<BenchResult, "value" | "target" | "goal" | "unit">): string {
  if (r.target === undefined || r.target === null || !r.goal) return "—";
  if (r.value === null || !Number.isFinite(r.value)) return "**not measured**";
  const v = r.goal === "abs-max" ? Math.abs(r.value) : r.value;
  const met = r.goal === "min" ? v >= r.target : v <= r.target;
  if (met) return "met";
  const by = r.goal === "min" ? r.target - v : v - r.target;
  const rel = by / r.target;
  return `**missed** by ${num(by, r.unit)} (${(100 * rel).toFixed(0)}% of the target)`;
}

function num(v: number | null | undefined, unit = ""): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "n/a";
  const abs = Math.abs(v);
  const s = abs >= 1000 ? Math.round(v).toLocaleString("en-US") : abs >= 10 ? v.toFixed(1) : abs >= 1 ? v.toFixed(2) : v.toFixed(3);
  return unit && !["ratio", "fraction"].includes(unit) ? `${s} ${unit}` : s;
}

function goalText(target: number, goal: string, unit: string): string {
  if (goal === "abs-max") return `within ±${num(target, unit)}`;
  return `${goal === "min" ? "≥" : "≤"} ${num(target, unit)}`;
}

const get = (rs: BenchResult[], name: string) => rs.find((r) => r.name === name);
const detailOf = <T>(r: BenchResult | undefined) => (r?.detail ?? {}) as T;

/** The Markdown of docs/BENCHMARKS.md. */
export function renderBenchmarks(results: BenchResult[]): string {
  const machine = detailOf<{
    cpuModel?: string;
    memGiB?: number;
    node?: string;
    commit?: string;
    dirty?: boolean;
    startedAt?: string;
    finishedAt?: string;
    loadStart?: number[];
    loadEnd?: number[];
    reruns?: Array<{ steps: string[]; at: string; load: number[] }>;
  }>(get(results, "machine.nproc"));
  const nproc = get(results, "machine.nproc")?.value;
  const L: string[] = [];
  L.push("# Benchmarks");
  L.push("");
  L.push("<!-- Generated by `npm run bench` (scripts/bench.ts → scripts/render-benchmarks.ts) from bench-results.json. Do not edit by hand: re-run. -->");
  L.push("");
  L.push("Each figure is measured next to a reference run **in the same command on the same machine**, so most of the machine's noise falls on both. Reproduce everything with:");
  L.push("");
  L.push("```sh");
  L.push("npm run stack:up   # Redis, Kafka, Prometheus");
  L.push("npm run bench      # ≈ 10 min; writes bench-results.json and this file");
  L.push("```");
  L.push("");
  L.push("## Machine and run");
  L.push("");
  L.push(`- CPU: ${nproc ?? "?"} cores, ${machine.cpuModel ?? "?"}; memory ${machine.memGiB ?? "?"} GiB; Node ${machine.node ?? "?"}`);
  L.push(`- Run: ${machine.startedAt ?? "?"} → ${machine.finishedAt ?? "?"} (UTC), commit \`${machine.commit ?? "?"}\`${machine.dirty ? " (the work tree had uncommitted changes: the figures are not of that commit alone)" : ""}`);
  L.push(
    `- Load average (1/5/15 min) at start ${machine.loadStart?.map((x) => x.toFixed(2)).join(" / ") ?? "?"}, at end ${machine.loadEnd?.map((x) => x.toFixed(2)).join(" / ") ?? "?"}: **the machine was shared** (other engineers' tests on the same cores), which slows absolute figures; ratios against same-run references are the figures to read.`,
  );
  for (const r of machine.reruns ?? []) L.push(`- Re-run of step(s) ${r.steps.join(", ")} at ${r.at} (load ${r.load.join(" / ")}): \`npm run bench -- --only ${r.steps.join(",")}\`, figures of the other steps kept.`);
  L.push("");
  L.push("## Figures against targets");
  L.push("");
  L.push("| Figure | Value | Reference (same run) | Ratio | Target | Verdict | Reproduce |");
  L.push("|---|---|---|---|---|---|---|");
  for (const name of Object.keys(FIGURES)) {
    const f = FIGURES[name]!;
    const r = get(results, name);
    const unit = r?.unit ?? "";
    L.push(
      `| \`${name}\`<br>${f.what} | ${r ? num(r.value, unit) : "**not measured**"} | ${r ? num(r.reference) : "—"}<br><sub>${f.referenceIs}</sub> | ${r ? num(r.ratio) : "—"} | ${goalText(f.target, f.goal, unit)} (${f.source}) | ${r ? verdict({ ...r, target: f.target, goal: f.goal }) : "**not measured**"} | \`${r?.command ?? "npm run bench"}\` |`,
    );
  }
  L.push("");
  const others = results.filter((r) => !(r.name in FIGURES) && !r.name.startsWith("machine."));
  if (others.length) {
    L.push("### Supporting figures");
    L.push("");
    L.push("| Figure | Value | Reference | Ratio | Reproduce |");
    L.push("|---|---|---|---|---|");
    for (const r of others) L.push(`| \`${r.name}\` | ${num(r.value, r.unit)} | ${num(r.reference)} | ${num(r.ratio)} | \`${r.command ?? ""}\` |`);
    L.push("");
  }
  L.push(...pagesAndFleetSection(results));
  L.push(...consumerSection(results));
  L.push(...memorySection(results));
  L.push(...ciSection(results));
  L.push(...otherMisses(results));
  return `${L.join("\n")}\n`;
}

/** The pages' paint and the fleet overview: the run's detail; the analysis is hand-written in docs/UI.md. */
function pagesAndFleetSection(rs: BenchResult[]): string[] {
  const L: string[] = ["## Pages and the fleet overview", "", "How the pages are painted by the server and how the overview scales to a fleet, with the A/B figures: [UI.md](UI.md#performance-pages-painted-by-the-server-and-the-fleet).", ""];
  for (const p of ["overview", "handler"] as const) {
    const r = get(rs, `ui.${p}_data_painted_ms`);
    const d = detailOf<{ path?: string; loads?: Array<{ paintedMs: number; load1m: number }>; loadAvg1m?: number; interactiveMedianMs?: number }>(r);
    const interactive = d.interactiveMedianMs === undefined ? "" : `; recharts' interactive chart replaced the server's drawing at ${num(d.interactiveMedianMs, "ms")} (median)`;
    if (r) L.push(`- ${p} \`${d.path ?? "?"}\`: data painted ${(d.loads ?? []).map((l) => `${l.paintedMs} ms`).join(", ")} (median ${num(r.value, "ms")})${interactive}, load average ${(d.loads ?? []).map((l) => l.load1m.toFixed(2)).join(", ")}.`);
  }
  const f = get(rs, "fleet.overview_p95_ms_200_handlers_50_viewers");
  const fd = detailOf<{ requests?: number; p50?: number; p99?: number; errors?: number; queriesPerRefresh?: { h10: number; h200: number }; servedByPrometheus?: { h10: number; h200: number }; loadStart?: number[] }>(f);
  if (f) {
    L.push(
      `- fleet: ${num(fd.requests ?? null)} \`/api/overview\` answers of 200 handlers to 50 viewers, p50 ${num(fd.p50 ?? null, "ms")}, p95 ${num(f.value, "ms")}, p99 ${num(fd.p99 ?? null, "ms")}, ${fd.errors ?? "?"} errors (load average ${fd.loadStart?.[0]?.toFixed(2) ?? "?"}); Prometheus requests per refresh ${fd.queriesPerRefresh?.h10 ?? "?"} with 10 handlers and ${fd.queriesPerRefresh?.h200 ?? "?"} with 200 (Prometheus' own \`prometheus_http_requests_total\`: ${fd.servedByPrometheus?.h10 ?? "?"} and ${fd.servedByPrometheus?.h200 ?? "?"}).`,
    );
  }
  L.push("");
  return L;
}

interface ProfileSplit {
  sampledSeconds: number;
  areas: Record<string, number>;
  top: Array<{ frame: string; fraction: number }>;
}

function consumerSection(rs: BenchResult[]): string[] {
  const L: string[] = [
    "## The consumer path: where the time goes",
    "",
    "The changes made for the goals of issues 9 and 15, their A/B figures, and what still limits them: [CONSUMER-PERFORMANCE.md](CONSUMER-PERFORMANCE.md).",
    "",
  ];
  const perSec = (v: string) => get(rs, `consumer.msgs_per_sec.${v}`);
  const raw = perSec("raw");
  if (!raw) return [...L, "Not measured in this run.", ""];
  const usPerMsg = (v: string) => {
    const r = perSec(v);
    return r?.value ? 1e6 / r.value : null;
  };
  L.push("Median msgs/s and µs per message of each variant (same topic, same consumer settings, fresh group each):");
  L.push("");
  L.push("| Variant | msgs/s | wall µs/msg | ÷ raw | CPU µs/msg | Top areas of the last round's CPU profile (self time) |");
  L.push("|---|---|---|---|---|---|");
  const desc: Record<string, string> = {
    raw: "raw kafkajs `eachBatch` + no-op",
    sub: "KafkaSubscriber → Router → no-op (no middleware)",
    mem: "… + default stack, in-memory repository",
    ours: "… + default stack, Redis Deduplicator (lease, batch claims)",
    rel: "… same with the release marking (one write per message)",
    cas: "… ours with the compare-and-set `done` mark of before issue 15 (A/B)",
    pipe: "… ours with the `done` marks as a native pipeline instead of a script (A/B)",
    floor: "**floor**: kafkajs `eachBatch` + one pipelined `SET NX PX` per message, awaited per batch",
    naive: "**naive peer**: kafkajs `eachMessage` + `await redis.set(… NX)` per message",
  };
  for (const v of ["raw", "sub", "mem", "ours", "rel", "cas", "pipe", "floor", "naive"]) {
    const r = perSec(v);
    if (!r) continue;
    const prof = detailOf<{ profile?: ProfileSplit }>(r).profile;
    const areas = prof
      ? Object.entries(prof.areas)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 5)
          .map(([a, f]) => `${a} ${(100 * f).toFixed(0)}%`)
          .join(", ")
      : "—";
    L.push(`| ${desc[v]} | ${num(r.value)} | ${num(usPerMsg(v))} | ${num(r.ratio)} | ${num(cpuOf(rs, v))} | ${areas} |`);
  }
  L.push("");
  const load = get(rs, "consumer.loadavg_1m");
  L.push(`Load average during the consumer benchmark: ${num(load?.value)} on ${get(rs, "machine.nproc")?.value ?? "?"} cores. Per-round figures are in bench-results.json (\`detail.rounds\`); they vary by 2× between rounds on this shared machine, hence the medians.`);
  L.push("");
  // Issue 15's references, measured in the same run as ours.
  for (const [ref, name] of [
    ["floor", "consumer.with_dedup_vs_floor"],
    ["naive", "consumer.with_dedup_vs_naive_peer"],
  ] as const) {
    const r = get(rs, name);
    const refRow = perSec(ref);
    if (!r || !refRow) continue;
    const dd = detailOf<{ perRound?: number[]; referenceCpuUsPerMsg?: number; oursCpuUsPerMsg?: number }>(r);
    const redis = (v: string) => detailOf<{ redisCpuUsPerMsg?: number }>(perSec(v)).redisCpuUsPerMsg ?? null;
    L.push(
      `- ours ÷ ${ref === "floor" ? "the floor" : "the naive peer"}: **${num(r.value)}** (per round ${(dd.perRound ?? []).map((x) => num(x)).join(", ")}); ${ref} ${num(refRow.value)} msgs/s at ${num(dd.referenceCpuUsPerMsg ?? null)} µs CPU per message (of which Redis server ${num(redis(ref))}), ours ${num(perSec("ours")?.value)} msgs/s at ${num(dd.oursCpuUsPerMsg ?? null)} (Redis ${num(redis("ours"))}); load average ${num(load?.value)}.`,
    );
  }
  L.push("");
  L.push(...findings(rs));
  return L;
}

/** µs per message of a variant's median CPU (this process; `ours` includes the Redis server's). */
function cpuOf(rs: BenchResult[], v: string): number | null {
  return detailOf<{ cpuUsPerMsg?: number }>(get(rs, `consumer.msgs_per_sec.${v}`)).cpuUsPerMsg ?? null;
}

function findings(rs: BenchResult[]): string[] {
  const L: string[] = [];
  const val = (n: string) => get(rs, n)?.value ?? null;
  const client = (n: string) => detailOf<{ clientUs?: number }>(get(rs, n)).clientUs ?? null;
  const rawCpu = cpuOf(rs, "raw");
  const subCpu = cpuOf(rs, "sub");
  const oursCpu = cpuOf(rs, "ours");
  const claimR = val("consumer.redis_cpu_us_per_key.script.claim");
  // The done mark is the unconditional SET … GET since issue 15 (compare-and-set before).
  const doneR = val("consumer.redis_cpu_us_per_key.script.done_set_get") ?? val("consumer.redis_cpu_us_per_key.script.done_mark");
  const plainR = val("consumer.redis_cpu_us_per_key.plain_set");
  const redisPerMsg = claimR !== null && doneR !== null ? claimR + doneR : null;
  const router = val("consumer.stack_cpu_us.router");
  const retryStep = val("consumer.stack_cpu_us.retry");
  const dedupStep = val("consumer.stack_cpu_us.deduplicator");
  const metricsStep = val("consumer.stack_cpu_us.metrics");
  const d = (a: number | null, b: number | null) => (a !== null && b !== null ? a - b : null);
  L.push("### CPU per message, layer by layer");
  L.push("");
  if (rawCpu !== null) {
    L.push(`CPU time per message is steadier than msgs/s on a shared machine (\`process.cpuUsage\` over each consume; for \`ours\` plus the Redis server's CPU from \`INFO cpu\`, which on the shared Redis also holds other clients' work): raw ${num(rawCpu)} µs, subscriber ${num(subCpu)} µs, full path ${num(oursCpu)} µs.`);
    L.push("");
  }
  if (router !== null) {
    L.push("In-process, without Kafka (`npm run bench:consumer -- --breakdown`: Router.deliverBatch of 100-message batches, in-memory store; each row adds one layer):");
    L.push("");
    L.push("| Layer added | CPU µs/msg (cumulative) | Added |");
    L.push("|---|---|---|");
    for (const id of ["router", "correlation_id", "recoverer", "poison_queue", "retry", "deduplicator", "metrics"]) {
      const r = get(rs, `consumer.stack_cpu_us.${id}`);
      if (!r) continue;
      L.push(`| ${detailOf<{ step?: string }>(r).step ?? id} | ${num(r.value)} | ${r.reference === null ? "—" : num((r.value ?? 0) - r.reference)} |`);
    }
    L.push("");
  }
  if (claimR !== null) {
    L.push("Redis, per key, on an own `redis-server` (same command): server CPU and client (ioredis + repository) CPU for the two writes of the lease marking, by batch transport:");
    L.push("");
    L.push("| Operation | Redis CPU µs/key | Client CPU µs/key |");
    L.push("|---|---|---|");
    for (const mode of ["script", "pipeline"]) {
      for (const op of ["claim", "done_mark", "done_set_get"]) {
        const n = `consumer.redis_cpu_us_per_key.${mode}.${op}`;
        const what = op === "claim" ? "batch claim (`SET NX PX GET`)" : op === "done_mark" ? "batch done mark, compare-and-set (old, not sent any more)" : "batch done mark, unconditional `SET PX GET` (now; the script answers only keys held by others)";
        // A pipelined compare-and-set is one EVALSHA per key: a script call's own cost per key.
        const how = mode === "script" ? "one script call per batch" : op === "done_mark" ? "pipeline of one `EVALSHA` per key" : "pipeline of native commands";
        if (get(rs, n)) L.push(`| ${what}, ${how} | ${num(val(n))} | ${num(client(n))} |`);
      }
    }
    L.push(`| reference: pipelined plain \`SET PX\` (one write, no check) | ${num(plainR)} | ${num(client("consumer.redis_cpu_us_per_key.plain_set"))} |`);
    L.push("");
  }
  L.push("### What stands between us and the goals (0.5 of raw kafkajs, 0.8 of the floor, 4× the naive peer)");
  L.push("");
  const floorCpu = cpuOf(rs, "floor");
  const naiveCpu = cpuOf(rs, "naive");
  const redisOf = (v: string) => detailOf<{ redisCpuUsPerMsg?: number }>(get(rs, `consumer.msgs_per_sec.${v}`)).redisCpuUsPerMsg ?? null;
  if (rawCpu !== null && oursCpu !== null) {
    L.push(
      `1. **CPU per message on 2 shared cores.** Raw kafkajs spends ${num(rawCpu)} µs per message; 0.5 of its rate leaves the whole dedup path ${num(rawCpu)} µs more (process + Redis). Ours spends ${num(oursCpu)} µs (Redis server ${num(redisOf("ours"))} of it: the claim and the \`done\` mark, ${num(redisPerMsg)} µs per key pair on an own server). On this machine throughput follows CPU, so the ratio sits near raw ÷ ours = ${num(rawCpu / oursCpu)}.`,
    );
  }
  if (floorCpu !== null && naiveCpu !== null && oursCpu !== null) {
    L.push(
      `2. **The references are CPU-bound too.** The floor spends ${num(floorCpu)} µs per message (Redis ${num(redisOf("floor"))}: one write, but a pipelined ioredis command per key), the naive peer ${num(naiveCpu)} µs (Redis ${num(redisOf("naive"))}: one round trip per message). 4× the naive peer would need ours at ≈ ${num(naiveCpu / 4)} µs per message, below raw kafkajs alone (${num(rawCpu)}): the goal assumes a naive peer bound by round-trip latency, which 2 saturated cores do not give it.`,
    );
  }
  if (subCpu !== null && rawCpu !== null && dedupStep !== null && retryStep !== null && router !== null) {
    L.push(
      `3. **Where ours spends it** (in-process, \`--breakdown\`): transport ${num(d(subCpu, rawCpu))} µs/msg over raw, Router ${num(router)}, the four outer middlewares ${num(d(retryStep, router))}, the Deduplicator ${num(d(dedupStep, retryStep))} and its metrics ${num(d(metricsStep, dedupStep))} (in-memory store), ioredis ${num((client("consumer.redis_cpu_us_per_key.script.claim") ?? 0) + (client("consumer.redis_cpu_us_per_key.script.done_set_get") ?? client("consumer.redis_cpu_us_per_key.script.done_mark") ?? 0))} µs per key for the two batch scripts.`,
    );
  }
  L.push("");
  L.push("The levers measured, kept or not, and the next ones: [CONSUMER-PERFORMANCE.md](CONSUMER-PERFORMANCE.md#issue-15-the-floor-the-naive-peer-and-the-done-mark).");
  L.push("");
  return L;
}

/** What limits the missed figures measured by the other areas' benchmarks (owners: library, backend). */
function otherMisses(rs: BenchResult[]): string[] {
  const L: string[] = [];
  const missed = (n: string) => {
    const r = get(rs, n);
    const f = FIGURES[n];
    return r && f && verdict({ ...r, target: f.target, goal: f.goal }).includes("missed") ? r : undefined;
  };
  const batch = missed("dedup.batch_claims_vs_redis_benchmark_p64");
  const scan = missed("inspect.scan_keys_per_sec");
  const est = missed("inspect.estimate_ms_1m_keys");
  const scanRatio = missed("inspect.scan_vs_plain_scan");
  const mw = missed("dedup.middleware_overhead_us");
  if (!batch && !scan && !est && !scanRatio && !mw) return L;
  L.push("## Other missed targets: what limits them", "");
  if (mw) {
    const router = get(rs, "consumer.stack_cpu_us.router")?.value ?? null;
    const dedup = get(rs, "consumer.stack_cpu_us.deduplicator")?.value ?? null;
    const plainUs = get(rs, "consumer.redis_cpu_us_per_key.plain_set")?.value ?? null;
    L.push(
      `- \`dedup.middleware_overhead_us\` = ${num(mw.value)} µs: an absolute CPU time on the consumer's thread (the Deduplicator with the in-memory repository, lease marking and metrics, minus the bare handler in the same loop), so it moves with the machine's speed, which ratios do not: in this run the Router alone cost ${num(router)} µs per message, the Deduplicator on the consumer path ${num(dedup)} µs and a bare Redis SET ${num(plainUs)} µs of Redis CPU (\`--breakdown\`) — compare those with another run's before reading a change in this figure as the code's. Next lever: the single-delivery path's per-message closures and metric cells (the batch path has them once per chunk). Owner: library (server/dedup/deduplicator.ts).`,
    );
  }
  if (batch) {
    const clientUs = get(rs, "dedup.batch_client_cpu_us_per_claim.lease")?.value ?? null;
    const redisUs = get(rs, "consumer.redis_cpu_us_per_key.script.claim")?.value ?? null;
    const plainUs = get(rs, "consumer.redis_cpu_us_per_key.plain_set")?.value ?? null;
    L.push(
      `- \`dedup.batch_claims_vs_redis_benchmark_p64\` = ${num(batch.value)}: the reference is \`redis-benchmark\` (a C client, 50 connections, 64 commands in flight each) at ${num(batch.reference)} SET/s. A batch claim costs ${num(clientUs)} µs of client CPU (\`bench:dedup\`'s column) plus ${num(redisUs)} µs of Redis CPU per key (\`--breakdown\`; a bare SET ${num(plainUs)} µs), and both processes share 2 busy cores, so one Node connection tops out near ${num(clientUs && redisUs ? 1e6 / (clientUs + redisUs) : null)} claims/s. Closing the gap needs less client CPU per claim (library: \`Deduplicator.prepareBatch\` and \`RedisRepository.claimBatch\` argument building) or several connections; see docs/LIBRARY.md.`,
    );
  }
  if (scan) {
    const d = detailOf<{ maxCallMicros?: number; calls?: number }>(scan);
    L.push(
      `- \`inspect.scan_keys_per_sec\` = ${num(scan.value)}: a plain \`SCAN … COUNT 1000\` loop reached ${num(scan.reference)} keys/s on the same keyspace in the same run (the inspector: ${num(scan.ratio)} of it); the inspector's per-key grouping in Lua costs the difference (${d.calls ?? "?"} script calls, slowest ${d.maxCallMicros ?? "?"} µs server time). Owner: backend (server/observe/keys/scripts.ts).`,
    );
  }
  if (scanRatio) {
    L.push(
      `- \`inspect.scan_vs_plain_scan\` = ${num(scanRatio.value)}: the exact count PTTLs every key (exact no-TTL counts) on a master whose INFO keyspace shows keys without TTL; in the script a SCAN step costs ~2 µs per key before any work, the grouping ~1 µs and the PTTL ~1.5 µs, against ~2.5 µs per key for the whole plain SCAN loop, so ~0.55 is its ceiling here. A/B figures, load and next levers: server/observe/README.md (Inspector A/B). Owner: backend (server/observe/keys/scripts.ts).`,
    );
  }
  if (est) {
    const d = detailOf<{ runs?: number[]; draws?: number; worstHandlerErrorPct?: number; method?: string }>(est);
    L.push(
      `- \`inspect.estimate_ms_1m_keys\` = ${num(est.value)} ms: the median of 5 runs (${d.runs?.join(", ") ?? "?"} ms) of ${d.draws ?? "?"} sampled keys (${d.method ?? "RANDOMKEY draws"}), each mostly server time on a Redis that shares the 2 cores (worst per-handler error ${d.worstHandlerErrorPct ?? "?"}%, inside ±3%). Owner: backend (\`KeyInspector.estimate\`: fewer draws for the same bound, or draws on several connections).`,
    );
  }
  L.push("");
  return L;
}

/** `ci.wall_s`: the phases of the fresh-clone `.ci/run` it was read from (test-results/ci-timing.json). */
function ciSection(rs: BenchResult[]): string[] {
  const r = get(rs, "ci.wall_s");
  if (!r) return [];
  const d = detailOf<{ phases?: Array<{ phase: string; s: number }>; commit?: string; finishedAt?: string; mode?: string }>(r);
  const L: string[] = ["## CI wall time", ""];
  L.push(`\`bash .ci/run\` on a fresh clone of \`${d.commit ?? "?"}\` (finished ${d.finishedAt ?? "?"}, ${d.mode ?? "?"} order): **${num(r.value)} s** wall; the same phases one after another ${num(r.reference)} s.`);
  L.push("");
  if (d.phases?.length) {
    L.push("| Phase | s |", "|---|---|");
    for (const p of d.phases) L.push(`| ${p.phase.trim()} | ${Math.round(p.s).toLocaleString("en-US")} |`);
    L.push("");
  }
  L.push("The order and what each phase may run beside: scripts/test-all.sh; the levers tried and the next ones: [CONSUMER-PERFORMANCE.md](CONSUMER-PERFORMANCE.md).");
  L.push("");
  return L;
}

function memorySection(rs: BenchResult[]): string[] {
  const L: string[] = ["## Memory per key", ""];
  const err = get(rs, "redis.bytes_per_key_projection_error");
  if (!err) return [...L, "Not measured in this run.", ""];
  const md = detailOf<{ keys?: number; key?: string }>(get(rs, "redis.bytes_per_key.lease"));
  L.push(`${num(md.keys ?? null)} keys \`${md.key ?? "?"}\` (TTL 24 h) per marking on a private \`redis-server\`, through the real path (Router → Deduplicator → RedisRepository); \`used_memory\` before/after:`);
  L.push("");
  L.push("| Marking | Measured B/key | Inspector estimate B/key | Error | `MEMORY USAGE` alone B/key | Error |");
  L.push("|---|---|---|---|---|---|");
  for (const m of ["lease", "release", "naive"]) {
    const r = get(rs, `redis.bytes_per_key.${m}`);
    if (!r) continue;
    const corr = detailOf<{ memoryUsageOnlyBytesPerKey?: number | null }>(r).memoryUsageOnlyBytesPerKey ?? null;
    const pct = (x: number | null) => (x === null ? "n/a" : `${(100 * x).toFixed(1)}%`);
    L.push(`| ${m} | ${num(r.value)} | ${num(r.reference)} | ${pct(r.ratio === null ? null : r.ratio - 1)} | ${num(corr)} | ${pct(corr === null || !r.value ? null : corr / r.value - 1)} |`);
  }
  L.push("");
  L.push(
    "`MEMORY USAGE` counts a key's own allocations (key string, value object, its main-dict entry) but not what the key costs the database around it: its entry in the **expires** dict (every dedup key has a TTL) and its share of the hash tables' bucket arrays — about 40 B of a dedup key. The inspector now adds that overhead to each sampled key, read from `MEMORY STATS` (`db.N overhead.hashtable.expires` ÷ expiring keys) plus 8 B × the main table's slots ÷ keys (server/observe/keys/samples.ts; fixed in this issue, tested against `used_memory` in key-samples.integration.test.ts). The last two columns show what `MEMORY USAGE` alone gave.",
  );
  L.push("");
  return L;
}

function main(): void {
  const input = arg("in", "bench-results.json");
  const out = arg("out", "docs/BENCHMARKS.md");
  const results = JSON.parse(readFileSync(input, "utf8")) as BenchResult[];
  writeFileSync(out, renderBenchmarks(results));
  console.log(`rendered ${out} from ${input} (${results.length} figures)`);
}

if (process.argv[1]?.endsWith("render-benchmarks.ts")) main();
