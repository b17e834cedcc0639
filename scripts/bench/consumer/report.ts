/**
 * The figures of `bench:consumer`'s rounds: medians per variant, ratios to raw kafkajs and to the
 * two Redis-backed references, what the Kafka-transactions mode costs a relay (against the floor and
 * the plain relay), the per-message CPU budget of ours, printed and as the JSON rows
 * `npm run bench` reads (name, value, unit, reference, ratio, target?, detail).
 */
import { median } from "../../lib/stats";
import type { RoundResult, RoundsOutcome } from "./rounds";
import { fmt } from "./rounds";
import { VARIANT, type Variant } from "./variants";

type Row = Record<string, unknown>;

/** Medians of one variant's rounds. */
function medians(results: readonly RoundResult[]) {
  const of = (v: Variant, f: (r: RoundResult) => number) => median(results.filter((r) => r.variant === v).map(f));
  return {
    perSec: (v: Variant) => of(v, (r) => r.perSec),
    cpu: (v: Variant) => of(v, (r) => r.cpuUsPerMsg),
    redisCpu: (v: Variant) => of(v, (r) => r.redisCpuUsPerMsg),
    redisCmd: (v: Variant) => of(v, (r) => r.redisCmdUsPerMsg),
  };
}
type Medians = ReturnType<typeof medians>;

/** `v`'s msgs/s ÷ `ref`'s, round by round. */
const perRoundRatio = (results: readonly RoundResult[], v: Variant, ref: Variant) =>
  results
    .filter((r) => r.variant === v)
    .map((r) => r.perSec / results.find((x) => x.variant === ref && x.round === r.round)!.perSec);

/** Each variant's msgs/s ÷ raw kafkajs' (medians), when raw ran. */
function vsRawRows(variants: readonly Variant[], results: readonly RoundResult[], m: Medians): Row[] {
  if (!variants.includes("raw")) return [];
  return variants
    .filter((v) => v !== "raw")
    .map((v) => {
      const perRound = perRoundRatio(results, v, "raw");
      const ratio = m.perSec(v) / m.perSec("raw");
      console.log(
        `ratio ${v}/raw = ${ratio.toFixed(3)} (per round ${perRound.map((x) => x.toFixed(3)).join(", ")})${v === "ours" ? `   goal ≥ 0.5: ${ratio >= 0.5 ? "met" : `MISSED by ${(0.5 - ratio).toFixed(3)}`}` : ""}`,
      );
      return {
        name: VARIANT[v].vsRaw,
        value: +ratio.toFixed(4),
        unit: "ratio",
        reference: +m.perSec("raw").toFixed(0),
        ratio: +ratio.toFixed(4),
        target: v === "ours" ? 0.5 : undefined,
        detail: { perRound: perRound.map((x) => +x.toFixed(4)) },
      };
    });
}

/** Ours against the two Redis-backed references of the same run: medians, and per round. */
function vsReferenceRows(variants: readonly Variant[], results: readonly RoundResult[], m: Medians): Row[] {
  const rows: Row[] = [];
  for (const [ref, name, goal] of [
    ["floor", "consumer.with_dedup_vs_floor", 0.8],
    ["naive", "consumer.with_dedup_vs_naive_peer", 4],
  ] as const) {
    if (!variants.includes("ours") || !variants.includes(ref)) continue;
    const perRound = perRoundRatio(results, "ours", ref);
    const ratio = m.perSec("ours") / m.perSec(ref);
    console.log(
      `ratio ours/${ref} = ${ratio.toFixed(3)} (per round ${perRound.map((x) => x.toFixed(3)).join(", ")})   goal ≥ ${goal}: ${ratio >= goal ? "met" : `MISSED by ${(goal - ratio).toFixed(3)}`}`,
    );
    rows.push({
      name,
      value: +ratio.toFixed(4),
      unit: "ratio",
      reference: +m.perSec(ref).toFixed(0),
      ratio: +ratio.toFixed(4),
      target: goal,
      detail: {
        perRound: perRound.map((x) => +x.toFixed(4)),
        referenceCpuUsPerMsg: +m.cpu(ref).toFixed(2),
        oursCpuUsPerMsg: +m.cpu("ours").toFixed(2),
      },
    });
  }
  return rows;
}

/**
 * What the Kafka-transactions mode costs a Kafka-to-Kafka handler (`relaytx`), when the run has it
 * and its references: its msgs/s against the floor (as ours' `consumer.with_dedup_vs_floor`) and
 * against the same handler with a plain publisher (`relay`, no guarantee), and the consumer CPU per
 * message it adds to that plain relay — beside the Redis mode's (`relaydedup`) when it ran.
 */
function transactionsRows(variants: readonly Variant[], results: readonly RoundResult[], m: Medians): Row[] {
  if (!variants.includes("relaytx")) return [];
  const rows: Row[] = [];
  for (const [ref, name] of [
    ["floor", "consumer.kafka_tx_vs_floor"],
    ["relay", "consumer.kafka_tx_vs_plain_relay"],
  ] as const) {
    if (!variants.includes(ref)) continue;
    const perRound = perRoundRatio(results, "relaytx", ref);
    const ratio = m.perSec("relaytx") / m.perSec(ref);
    console.log(
      `ratio relaytx/${ref} = ${ratio.toFixed(3)} (per round ${perRound.map((x) => x.toFixed(3)).join(", ")})`,
    );
    rows.push({
      name,
      value: +ratio.toFixed(4),
      unit: "ratio",
      reference: +m.perSec(ref).toFixed(0),
      ratio: +ratio.toFixed(4),
      detail: { perRound: perRound.map((x) => +x.toFixed(4)), msgsPerSec: +m.perSec("relaytx").toFixed(0) },
    });
  }
  if (variants.includes("relay")) {
    const added = m.cpu("relaytx") - m.cpu("relay");
    const redisMode = variants.includes("relaydedup") ? +(m.cpu("relaydedup") - m.cpu("relay")).toFixed(2) : null;
    console.log(
      `Kafka-transactions mode adds ${added.toFixed(2)} µs CPU per message to the plain relay${redisMode === null ? "" : ` (the Redis mode ${redisMode} µs, its Redis server's CPU included)`}`,
    );
    rows.push({
      name: "consumer.kafka_tx_added_cpu_us_per_msg",
      value: +added.toFixed(2),
      unit: "us/msg",
      reference: +m.cpu("relay").toFixed(2),
      ratio: +(m.cpu("relaytx") / m.cpu("relay")).toFixed(4),
      detail: { cpuUsPerMsg: +m.cpu("relaytx").toFixed(2), redisModeAddedCpuUsPerMsg: redisMode },
    });
  }
  return rows;
}

/** Each variant's median msgs/s, with its rounds, CPU, Redis time and profile in the detail. */
function perVariantRows(variants: readonly Variant[], o: RoundsOutcome, m: Medians): Row[] {
  const withRaw = variants.includes("raw");
  return variants.map((v) => ({
    name: `consumer.msgs_per_sec.${v}`,
    value: +m.perSec(v).toFixed(0),
    unit: "msgs/s",
    reference: withRaw ? +m.perSec("raw").toFixed(0) : null,
    ratio: withRaw ? +(m.perSec(v) / m.perSec("raw")).toFixed(4) : null,
    detail: {
      rounds: o.results.filter((r) => r.variant === v).map((r) => Math.round(r.perSec)),
      cpuUsPerMsg: +m.cpu(v).toFixed(2),
      redisCpuUsPerMsg: +m.redisCpu(v).toFixed(2),
      redisCmdUsPerMsg: +m.redisCmd(v).toFixed(2),
      profile: o.profiles.get(v),
      redisPerMsg: v === "ours" ? o.redisPerMsg : undefined,
    },
  }));
}

/**
 * The per-message CPU budget of ours (medians; process CPU, Redis server CPU apart): each of raw,
 * sub, mem and ours adds one layer to the one before, so the differences split the full path.
 */
function cpuBudgetRows(variants: readonly Variant[], m: Medians): Row[] {
  if (!["raw", "sub", "mem", "ours"].every((v) => variants.includes(v as Variant))) return [];
  const nodeOf = (v: Variant) => m.cpu(v) - m.redisCpu(v);
  const parts: Array<[string, string, number]> = [
    ["kafkajs", "kafkajs fetch + decode + eachBatch (raw)", nodeOf("raw")],
    [
      "transport",
      "KafkaSubscriber, Watermill decode, Router delivery, commits (sub − raw)",
      nodeOf("sub") - nodeOf("raw"),
    ],
    [
      "stack",
      "default stack + Deduplicator + metrics, in-memory store (mem − sub; split by --breakdown)",
      nodeOf("mem") - nodeOf("sub"),
    ],
    [
      "redis_client",
      "ioredis encode/decode + RedisRepository instead of the in-memory store (ours − mem, node only)",
      nodeOf("ours") - nodeOf("mem"),
    ],
    ["redis_server", "Redis server CPU (INFO cpu delta; shared server: others' load included)", m.redisCpu("ours")],
  ];
  console.log("per-message CPU budget of ours (µs, medians of this run):");
  const rows = parts.map(([id, what, us]) => {
    console.log(`  ${us.toFixed(2).padStart(7)}  ${what}`);
    return {
      name: `consumer.cpu_budget_us_per_msg.${id}`,
      value: +us.toFixed(3),
      unit: "us/msg",
      reference: +m.cpu("ours").toFixed(3),
      ratio: +(us / m.cpu("ours")).toFixed(4),
      detail: { what },
    };
  });
  if (variants.includes("floor"))
    console.log(
      `  floor for comparison: ${nodeOf("floor").toFixed(2)} µs node + ${m.redisCpu("floor").toFixed(2)} µs Redis server per message`,
    );
  return rows;
}

/** Prints the run's medians, ratios and CPU budget; answers the JSON rows. `load0` / `load1`: the load average at start and end. */
export function report(
  variants: readonly Variant[],
  rounds: number,
  o: RoundsOutcome,
  load0: number[],
  load1: number[],
): Row[] {
  const m = medians(o.results);
  console.log(
    `\nmedian msgs/s over ${rounds} round(s): ${variants.map((v) => `${v} ${fmt(m.perSec(v))}`).join("   ")}`,
  );
  console.log(
    `median CPU µs per message (this process${variants.includes("ours") ? "; ours + Redis server CPU" : ""}): ${variants.map((v) => `${v} ${m.cpu(v).toFixed(2)}`).join("   ")}`,
  );
  const out: Row[] = [
    ...vsRawRows(variants, o.results, m),
    ...vsReferenceRows(variants, o.results, m),
    ...transactionsRows(variants, o.results, m),
    ...perVariantRows(variants, o, m),
    ...cpuBudgetRows(variants, m),
  ];
  out.push({
    name: "consumer.loadavg_1m",
    value: +((load0[0]! + load1[0]!) / 2).toFixed(2),
    unit: "load",
    reference: null,
    ratio: null,
    detail: { start: load0, end: load1 },
  });
  for (const [v, p] of o.profiles) {
    console.log(
      `profile ${v} (last round, ${p.sampledSeconds.toFixed(1)} s): ${Object.entries(p.areas)
        .slice(0, 7)
        .map(([a, f]) => `${a} ${(100 * f).toFixed(1)}%`)
        .join(", ")}`,
    );
  }
  console.log(
    `loadavg start ${load0.map((x) => x.toFixed(2)).join(" ")}  end ${load1.map((x) => x.toFixed(2)).join(" ")}`,
  );
  return out;
}
