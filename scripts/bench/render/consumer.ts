/** docs/BENCHMARKS.md's consumer section: the variants, ours against the references, the CPU per layer, what limits the goals. */
import type { ProfileSplit } from "../consumer/profile";
import type { BenchResult } from "./figures";
import { detailOf, get, nprocOf, num } from "./format";
import { fill, PROSE, REDIS_OP_TEXT, VARIANT_TEXT } from "./prose";

type Rows = readonly BenchResult[];
const perSec = (rs: Rows, v: string) => get(rs, `consumer.msgs_per_sec.${v}`);
/** µs per message of a variant's median CPU (this process; the Redis variants include the Redis server's). */
const cpuOf = (rs: Rows, v: string) => detailOf<{ cpuUsPerMsg?: number }>(perSec(rs, v)).cpuUsPerMsg ?? null;
/** µs per message of the Redis server's CPU, median. */
const redisOf = (rs: Rows, v: string) =>
  detailOf<{ redisCpuUsPerMsg?: number }>(perSec(rs, v)).redisCpuUsPerMsg ?? null;
const val = (rs: Rows, n: string) => get(rs, n)?.value ?? null;
/** The cores and the load average during the consumer benchmark, as the prose writes them. */
const machineOf = (rs: Rows) => ({ nproc: nprocOf(rs), load: num(get(rs, "consumer.loadavg_1m")?.value) });
/** Client CPU µs per key of a `--breakdown` Redis row. */
const client = (rs: Rows, n: string) => detailOf<{ clientUs?: number }>(get(rs, n)).clientUs ?? null;
const diff = (a: number | null, b: number | null) => (a !== null && b !== null ? a - b : null);

/** The top 5 areas of a variant's last-round CPU profile. */
function topAreas(r: BenchResult): string {
  const prof = detailOf<{ profile?: ProfileSplit }>(r).profile;
  if (!prof) return "—";
  return Object.entries(prof.areas)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([a, f]) => `${a} ${(100 * f).toFixed(0)}%`)
    .join(", ");
}

/** The widest max ÷ min of one variant's per-round msgs/s, as a clause of the load sentence; "" without rounds. */
function roundSpread(rs: Rows): string {
  let widest: { spread: number; variant: string } | null = null;
  for (const v of Object.keys(VARIANT_TEXT)) {
    const rounds = detailOf<{ rounds?: number[] }>(perSec(rs, v)).rounds ?? [];
    if (rounds.length < 2 || Math.min(...rounds) <= 0) continue;
    const spread = Math.max(...rounds) / Math.min(...rounds);
    if (!widest || spread > widest.spread) widest = { spread, variant: v };
  }
  return widest ? fill(PROSE.roundSpread, { spread: num(widest.spread), variant: widest.variant }) : "";
}

/** "## The consumer path": the variants' table, ours against the floor and the naive peer, then the CPU per layer. */
export function consumerSection(rs: Rows): string[] {
  const L: string[] = ["## The consumer path: where the time goes", "", PROSE.consumerIntro, ""];
  if (!perSec(rs, "raw")) return [...L, PROSE.notMeasured, ""];
  L.push(PROSE.consumerTable, "");
  L.push(
    "| Variant | msgs/s | wall µs/msg | ÷ raw | CPU µs/msg | Top areas of the last round's CPU profile (self time) |",
  );
  L.push("|---|---|---|---|---|---|");
  for (const [v, text] of Object.entries(VARIANT_TEXT)) {
    const r = perSec(rs, v);
    if (r)
      L.push(
        `| ${text} | ${num(r.value)} | ${num(r.value ? 1e6 / r.value : null)} | ${num(r.ratio)} | ${num(cpuOf(rs, v))} | ${topAreas(r)} |`,
      );
  }
  L.push("");
  const { load } = machineOf(rs);
  L.push(fill(PROSE.consumerLoad, { ...machineOf(rs), spread: roundSpread(rs) }), "");
  for (const [ref, name, refName] of [
    ["floor", "consumer.with_dedup_vs_floor", "the floor"],
    ["naive", "consumer.with_dedup_vs_naive_peer", "the naive peer"],
  ] as const) {
    const r = get(rs, name);
    const refRow = perSec(rs, ref);
    if (!r || !refRow) continue;
    const dd = detailOf<{ perRound?: number[]; referenceCpuUsPerMsg?: number; oursCpuUsPerMsg?: number }>(r);
    L.push(
      fill(PROSE.oursVsReference, {
        refName,
        ratio: num(r.value),
        perRound: (dd.perRound ?? []).map((x) => num(x)).join(", "),
        ref,
        refPerSec: num(refRow.value),
        refCpu: num(dd.referenceCpuUsPerMsg ?? null),
        refRedis: num(redisOf(rs, ref)),
        oursPerSec: num(perSec(rs, "ours")?.value),
        oursCpu: num(dd.oursCpuUsPerMsg ?? null),
        oursRedis: num(redisOf(rs, "ours")),
        load,
      }),
    );
  }
  L.push("", ...layerTables(rs), ...goals(rs));
  return L;
}

/** "### CPU per message, layer by layer": per variant, per middleware (`--breakdown`), per Redis key and transport. */
function layerTables(rs: Rows): string[] {
  const L: string[] = ["### CPU per message, layer by layer", ""];
  const rawCpu = cpuOf(rs, "raw");
  if (rawCpu !== null)
    L.push(fill(PROSE.cpuSteadier, { raw: num(rawCpu), sub: num(cpuOf(rs, "sub")), ours: num(cpuOf(rs, "ours")) }), "");
  if (val(rs, "consumer.stack_cpu_us.router") !== null) {
    L.push(PROSE.breakdownIntro, "", "| Layer added | CPU µs/msg (cumulative) | Added |", "|---|---|---|");
    for (const id of ["router", "correlation_id", "recoverer", "poison_queue", "retry", "deduplicator", "metrics"]) {
      const r = get(rs, `consumer.stack_cpu_us.${id}`);
      if (r)
        L.push(
          `| ${detailOf<{ step?: string }>(r).step ?? id} | ${num(r.value)} | ${r.reference === null ? "—" : num((r.value ?? 0) - r.reference)} |`,
        );
    }
    L.push("");
  }
  if (val(rs, "consumer.redis_cpu_us_per_key.script.claim") !== null) {
    L.push(PROSE.redisPerKeyIntro, "", "| Operation | Redis CPU µs/key | Client CPU µs/key |", "|---|---|---|");
    for (const mode of ["script", "pipeline"] as const) {
      for (const op of ["claim", "done_mark", "done_set_get"] as const) {
        const n = `consumer.redis_cpu_us_per_key.${mode}.${op}`;
        const how =
          mode === "script"
            ? REDIS_OP_TEXT.script
            : op === "done_mark"
              ? REDIS_OP_TEXT.pipelinedCompareAndSet
              : REDIS_OP_TEXT.pipeline;
        if (get(rs, n)) L.push(`| ${REDIS_OP_TEXT[op]}, ${how} | ${num(val(rs, n))} | ${num(client(rs, n))} |`);
      }
    }
    L.push(
      `| ${PROSE.plainSetReference} | ${num(val(rs, "consumer.redis_cpu_us_per_key.plain_set"))} | ${num(client(rs, "consumer.redis_cpu_us_per_key.plain_set"))} |`,
      "",
    );
  }
  return L;
}

/** Why ours is CPU-bound (with the key pair's Redis CPU) and where the references stand, when measured. */
function cpuBoundLines(rs: Rows): string[] {
  const L: string[] = [];
  const [rawCpu, oursCpu, floorCpu, naiveCpu] = [
    cpuOf(rs, "raw"),
    cpuOf(rs, "ours"),
    cpuOf(rs, "floor"),
    cpuOf(rs, "naive"),
  ] as const;
  // The done mark is the unconditional SET … GET; runs from before it measured the compare-and-set.
  const doneName =
    val(rs, "consumer.redis_cpu_us_per_key.script.done_set_get") !== null
      ? "consumer.redis_cpu_us_per_key.script.done_set_get"
      : "consumer.redis_cpu_us_per_key.script.done_mark";
  const claimR = val(rs, "consumer.redis_cpu_us_per_key.script.claim");
  const doneR = val(rs, doneName);
  if (rawCpu !== null && oursCpu !== null) {
    const keyPair = claimR !== null && doneR !== null ? claimR + doneR : null;
    L.push(
      fill(PROSE.cpuBound, {
        ...machineOf(rs),
        raw: num(rawCpu),
        ours: num(oursCpu),
        oursRedis: num(redisOf(rs, "ours")),
        keyPair: num(keyPair),
        rawOverOurs: num(rawCpu / oursCpu),
      }),
    );
  }
  if (floorCpu !== null && naiveCpu !== null && oursCpu !== null) {
    L.push(
      fill(PROSE.referencesCpuBound, {
        ...machineOf(rs),
        floor: num(floorCpu),
        floorRedis: num(redisOf(rs, "floor")),
        naive: num(naiveCpu),
        naiveRedis: num(redisOf(rs, "naive")),
        naiveQuarter: num(naiveCpu / 4),
        raw: num(rawCpu),
      }),
    );
  }
  return L;
}

/** Where ours spends its CPU per message, layer by layer, when the breakdown ran. */
function whereOursSpendsLines(rs: Rows): string[] {
  const [rawCpu, subCpu] = [cpuOf(rs, "raw"), cpuOf(rs, "sub")] as const;
  const stack = (id: string) => val(rs, `consumer.stack_cpu_us.${id}`);
  const [router, retryStep, dedupStep, metricsStep] = [
    stack("router"),
    stack("retry"),
    stack("deduplicator"),
    stack("metrics"),
  ] as const;
  if (subCpu === null || rawCpu === null || dedupStep === null || retryStep === null || router === null) return [];
  const ioredis =
    (client(rs, "consumer.redis_cpu_us_per_key.script.claim") ?? 0) +
    (client(rs, "consumer.redis_cpu_us_per_key.script.done_set_get") ??
      client(rs, "consumer.redis_cpu_us_per_key.script.done_mark") ??
      0);
  return [
    fill(PROSE.whereOursSpends, {
      transport: num(diff(subCpu, rawCpu)),
      router: num(router),
      outer: num(diff(retryStep, router)),
      dedup: num(diff(dedupStep, retryStep)),
      metrics: num(diff(metricsStep, dedupStep)),
      ioredis: num(ioredis),
    }),
  ];
}

/** Said only when this run shows it: CPU would allow more of the floor than ours reached, and ours waited more. */
function floorIdleLines(rs: Rows): string[] {
  const [oursCpu, floorCpu] = [cpuOf(rs, "ours"), cpuOf(rs, "floor")] as const;
  const idle = (v: string) => detailOf<{ profile?: ProfileSplit }>(perSec(rs, v)).profile?.areas["(idle)"];
  const [oursIdle, floorIdle, ratio] = [idle("ours"), idle("floor"), val(rs, "consumer.with_dedup_vs_floor")] as const;
  if (
    floorCpu !== null &&
    oursCpu !== null &&
    ratio !== null &&
    oursIdle !== undefined &&
    floorIdle !== undefined &&
    floorCpu / oursCpu > ratio &&
    oursIdle > floorIdle
  ) {
    return [
      fill(PROSE.floorIdle, {
        cpuRatio: num(floorCpu / oursCpu),
        ratio: num(ratio),
        oursIdle: (100 * oursIdle).toFixed(0),
        floorIdle: (100 * floorIdle).toFixed(0),
      }),
    ];
  }
  return [];
}

/** "### What stands between us and the goals": the three limits, each with this run's figures. */
function goals(rs: Rows): string[] {
  return [
    PROSE.goalsHeading,
    "",
    ...cpuBoundLines(rs),
    ...whereOursSpendsLines(rs),
    ...floorIdleLines(rs),
    "",
    PROSE.leversLink,
    "",
  ];
}
