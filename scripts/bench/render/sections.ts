/** docs/BENCHMARKS.md's sections beside the consumer's: the pages and the fleet, memory per key, CI wall time, the other missed targets. */
import { FIGURES, type BenchResult } from "./figures";
import { detailOf, get, nprocOf, num, verdict } from "./format";
import { fill, PROSE } from "./prose";

type Rows = readonly BenchResult[];

/** The pages' paint and the fleet overview: the run's detail; the analysis is hand-written in docs/UI.md. */
export function pagesAndFleetSection(rs: Rows): string[] {
  const L: string[] = ["## Pages and the fleet overview", "", PROSE.pagesIntro, ""];
  for (const page of ["overview", "handler"] as const) {
    const r = get(rs, `ui.${page}_data_painted_ms`);
    const d = detailOf<{
      path?: string;
      loads?: Array<{ paintedMs: number; load1m: number }>;
      interactiveMedianMs?: number;
    }>(r);
    const interactive =
      d.interactiveMedianMs === undefined ? "" : fill(PROSE.pageInteractive, { ms: num(d.interactiveMedianMs, "ms") });
    const loads = d.loads ?? [];
    if (r)
      L.push(
        fill(PROSE.pagePainted, {
          page,
          path: d.path ?? "?",
          loads: loads.map((l) => `${l.paintedMs} ms`).join(", "),
          median: num(r.value, "ms"),
          interactive,
          loadAverages: loads.map((l) => l.load1m.toFixed(2)).join(", "),
        }),
      );
  }
  const f = get(rs, "fleet.overview_p95_ms_200_handlers_50_viewers");
  const fd = detailOf<{
    requests?: number;
    p50?: number;
    p99?: number;
    errors?: number;
    queriesPerRefresh?: { h10: number; h200: number };
    servedByPrometheus?: { h10: number; h200: number };
    loadStart?: number[];
  }>(f);
  if (f) {
    L.push(
      fill(PROSE.fleet, {
        requests: num(fd.requests ?? null),
        p50: num(fd.p50 ?? null, "ms"),
        p95: num(f.value, "ms"),
        p99: num(fd.p99 ?? null, "ms"),
        errors: fd.errors ?? "?",
        load: fd.loadStart?.[0]?.toFixed(2) ?? "?",
        q10: fd.queriesPerRefresh?.h10 ?? "?",
        q200: fd.queriesPerRefresh?.h200 ?? "?",
        served10: fd.servedByPrometheus?.h10 ?? "?",
        served200: fd.servedByPrometheus?.h200 ?? "?",
      }),
    );
  }
  L.push("");
  return L;
}

/** Measured bytes per key of each marking against the inspector's estimate and `MEMORY USAGE` alone. */
export function memorySection(rs: Rows): string[] {
  const L: string[] = ["## Memory per key", ""];
  if (!get(rs, "redis.bytes_per_key_projection_error")) return [...L, PROSE.notMeasured, ""];
  const md = detailOf<{ keys?: number; key?: string }>(get(rs, "redis.bytes_per_key.lease"));
  L.push(fill(PROSE.memoryIntro, { keys: num(md.keys ?? null), key: md.key ?? "?" }), "");
  L.push(
    "| Marking | Measured B/key | Inspector estimate B/key | Error | `MEMORY USAGE` alone B/key | Error |",
    "|---|---|---|---|---|---|",
  );
  const pct = (x: number | null) => (x === null ? "n/a" : `${(100 * x).toFixed(1)}%`);
  for (const m of ["lease", "release", "naive"]) {
    const r = get(rs, `redis.bytes_per_key.${m}`);
    if (!r) continue;
    const corr = detailOf<{ memoryUsageOnlyBytesPerKey?: number | null }>(r).memoryUsageOnlyBytesPerKey ?? null;
    L.push(
      `| ${m} | ${num(r.value)} | ${num(r.reference)} | ${pct(r.ratio === null ? null : r.ratio - 1)} | ${num(corr)} | ${pct(corr === null || !r.value ? null : corr / r.value - 1)} |`,
    );
  }
  L.push("", PROSE.memoryUsageAlone, "");
  return L;
}

/** `ci.wall_s`: the phases of the fresh-clone `.ci/run` it was read from (test-results/ci-timing.json). */
export function ciSection(rs: Rows): string[] {
  const r = get(rs, "ci.wall_s");
  if (!r) return [];
  const d = detailOf<{
    phases?: Array<{ phase: string; s: number }>;
    steps?: Array<{ step: string; s: number; cpuBusyPct: number }>;
    commit?: string;
    finishedAt?: string;
    mode?: string;
    cpuBusyS?: number;
    cores?: number;
    cpuBusyPct?: number;
  }>(r);
  const L: string[] = ["## CI wall time", ""];
  L.push(
    fill(PROSE.ciWall, {
      commit: d.commit ?? "?",
      finishedAt: d.finishedAt ?? "?",
      mode: d.mode ?? "?",
      wall: num(r.value),
      serial: num(r.reference),
    }),
    "",
  );
  const int = (x: number) => Math.round(x).toLocaleString("en-US");
  if (d.cpuBusyS !== undefined && d.cores) {
    L.push(
      fill(PROSE.ciCpu, {
        cpu: int(d.cpuBusyS),
        cores: int(d.cores),
        pct: int(d.cpuBusyPct ?? 0),
        floor: int(d.cpuBusyS / d.cores),
      }),
      "",
    );
  }
  if (d.phases?.length) {
    L.push("| Phase | s |", "|---|---|");
    for (const p of d.phases) L.push(`| ${p.phase.trim()} | ${int(p.s)} |`);
    L.push("");
  }
  if (d.steps?.length) {
    L.push("| Step (one after another) | s | cores busy |", "|---|---|---|");
    for (const x of d.steps) L.push(`| ${x.step} | ${int(x.s)} | ${int(x.cpuBusyPct)} % |`);
    L.push("");
  }
  L.push(PROSE.ciLevers, "");
  return L;
}

/** What limits the missed figures measured by the other areas' benchmarks (owners: library, backend). */
export function otherMisses(rs: Rows): string[] {
  const missed = (n: string) => {
    const r = get(rs, n);
    const f = FIGURES[n];
    return r && f && verdict({ ...r, target: f.target, goal: f.goal }).includes("missed") ? r : undefined;
  };
  const value = (n: string) => get(rs, n)?.value ?? null;
  const [mw, batch, scan, scanRatio, est] = [
    missed("dedup.middleware_overhead_us"),
    missed("dedup.batch_claims_vs_redis_benchmark_p64"),
    missed("inspect.scan_keys_per_sec"),
    missed("inspect.scan_vs_plain_scan"),
    missed("inspect.estimate_ms_1m_keys"),
  ] as const;
  if (!batch && !scan && !est && !scanRatio && !mw) return [];
  const L: string[] = [PROSE.otherMissesHeading, ""];
  const plain = value("consumer.redis_cpu_us_per_key.plain_set");
  if (mw)
    L.push(
      fill(PROSE.middlewareOverhead, {
        value: num(mw.value),
        router: num(value("consumer.stack_cpu_us.router")),
        dedup: num(value("consumer.stack_cpu_us.deduplicator")),
        plain: num(plain),
      }),
    );
  if (batch) {
    const clientUs = value("dedup.batch_client_cpu_us_per_claim.lease");
    const redisUs = value("consumer.redis_cpu_us_per_key.script.claim");
    const ceiling = clientUs && redisUs ? 1e6 / (clientUs + redisUs) : null;
    L.push(
      fill(PROSE.batchClaims, {
        nproc: nprocOf(rs),
        value: num(batch.value),
        reference: num(batch.reference),
        clientUs: num(clientUs),
        redisUs: num(redisUs),
        plainUs: num(plain),
        ceiling: num(ceiling),
      }),
    );
  }
  if (scan) {
    const d = detailOf<{ maxCallMicros?: number; calls?: number }>(scan);
    L.push(
      fill(PROSE.scanKeys, {
        value: num(scan.value),
        reference: num(scan.reference),
        ratio: num(scan.ratio),
        calls: d.calls ?? "?",
        maxCallMicros: d.maxCallMicros ?? "?",
      }),
    );
  }
  if (scanRatio) L.push(fill(PROSE.scanRatio, { value: num(scanRatio.value) }));
  if (est) {
    const d = detailOf<{ runs?: number[]; draws?: number; worstHandlerErrorPct?: number; method?: string }>(est);
    L.push(
      fill(PROSE.estimate, {
        nproc: nprocOf(rs),
        value: num(est.value),
        runs: d.runs?.join(", ") ?? "?",
        draws: d.draws ?? "?",
        method: d.method ?? "?",
        worstPct: d.worstHandlerErrorPct ?? "?",
      }),
    );
  }
  L.push("");
  return L;
}
