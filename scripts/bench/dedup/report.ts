/** bench:dedup's printed tables and its rows of bench-results.json. */
import type { hotPathCosts } from "../hot-path-costs";
import { VARIANTS } from "../hot-path-costs";
import { overheadRow } from "./overhead";
import { MARKINGS } from "./settings";

type HotPath = Awaited<ReturnType<typeof hotPathCosts>>;

/** What the full run measured. */
export interface DedupFigures {
  claims: Record<string, Record<string, number>>;
  e2e: Record<string, number>;
  /** The redis-benchmark references (mean of before and after): SET/s at -P 1 and -P 64. */
  p1: number;
  p64: number;
  overhead: Record<string, number>;
  hot: HotPath;
  /** Lease batch claims ÷ P64, median of the interleaved rounds: one stream, four in flight. */
  ratio: number;
  ratio4: number;
}

/** The claims/s table: one line per marking, each mode and its ratio to the reference. */
export function printClaims(f: Pick<DedupFigures, "claims" | "e2e" | "p1" | "p64">): void {
  const { claims, e2e, p1, p64 } = f;
  console.log(
    "\nclaims/s (one connection)  per-message  autopipelined     batch  batch x4   batch/P64  batchx4/P64  auto/P64  per-msg/P1   e2e batch msgs/s   batch client CPU µs/claim",
  );
  for (const m of MARKINGS) {
    const c = claims[m]!;
    console.log(
      `  ${m.padEnd(24)} ${c["per-message"]!.toFixed(0).padStart(11)} ${c.autopipelined!.toFixed(0).padStart(14)} ${c.batch!.toFixed(0).padStart(9)} ${c["batch x4"]!.toFixed(0).padStart(9)}` +
        `   ${(c.batch! / p64).toFixed(3).padStart(9)} ${(c["batch x4"]! / p64).toFixed(3).padStart(12)} ${(c.autopipelined! / p64).toFixed(3).padStart(9)} ${(c["per-message"]! / p1).toFixed(3).padStart(11)} ${e2e[m]!.toFixed(0).padStart(18)} ${c["batch client cpu us"]!.toFixed(2).padStart(27)}`,
    );
  }
}

/** What each piece of the hot path adds, and the fingerprint alone per payload size. */
export function printHotPath(hot: HotPath): void {
  console.log(
    `\nhot path through Router.deliver, CPU µs per message (in-memory repository, lease, metrics on; median of 7 interleaved rounds × 50k):`,
  );
  for (const v of VARIANTS)
    console.log(
      `  ${v.name.padEnd(14)} ${hot.absolute[v.name]!.toFixed(2).padStart(6)} µs${v.base ? `   adds ${hot.added[v.name]!.toFixed(2)} µs over ${v.base}` : ""}`,
    );
  console.log(
    `  payloadFingerprint alone (SHA-256, 42 bits): ${Object.entries(hot.fingerprint)
      .map(([size, us]) => `${size} B ${us.toFixed(2)} µs`)
      .join(", ")}`,
  );
}

/** The rows of bench-results.json: the two headline ratios, the overhead, then every figure. */
export function resultRows(f: DedupFigures) {
  const { claims, e2e, p1, p64, overhead, hot, ratio, ratio4 } = f;
  return [
    {
      name: "dedup.batch_claims_vs_redis_benchmark_p64",
      value: +ratio.toFixed(4),
      unit: "ratio",
      reference: +p64.toFixed(0),
      ratio: +ratio.toFixed(4),
      target: 0.25,
    },
    {
      name: "dedup.batch_x4_claims_vs_redis_benchmark_p64",
      value: +ratio4.toFixed(4),
      unit: "ratio",
      reference: +p64.toFixed(0),
      ratio: +ratio4.toFixed(4),
      target: 0.25,
    },
    overheadRow(overhead.lease!),
    ...MARKINGS.flatMap((m) =>
      Object.entries(claims[m]!)
        .filter(([mode]) => mode !== "batch client cpu us")
        .map(([mode, v]) => ({
          name: `dedup.claims_per_sec.${m}.${mode.replace(" ", "")}`,
          value: +v.toFixed(0),
          unit: "claims/s",
          reference: +(mode === "per-message" ? p1 : p64).toFixed(0),
          ratio: +(v / (mode === "per-message" ? p1 : p64)).toFixed(4),
        })),
    ),
    ...MARKINGS.map((m) => ({
      name: `dedup.batch_client_cpu_us_per_claim.${m}`,
      value: +claims[m]!["batch client cpu us"]!.toFixed(3),
      unit: "us",
      reference: 0,
      ratio: 0,
    })),
    ...VARIANTS.map((v) => ({
      name: `dedup.hot_path_us.${v.name.replace(/ /g, "_")}`,
      value: +(v.base ? hot.added[v.name]! : hot.absolute[v.name]!).toFixed(3),
      unit: "us",
      reference: 0,
      ratio: 0,
      detail: v.base
        ? `CPU µs/msg added over ${v.base}; absolute ${hot.absolute[v.name]!.toFixed(3)}`
        : "CPU µs/msg, absolute",
    })),
    ...Object.entries(hot.fingerprint).map(([size, us]) => ({
      name: `dedup.fingerprint_us.${size}B`,
      value: +us.toFixed(3),
      unit: "us",
      reference: 0,
      ratio: 0,
    })),
    ...MARKINGS.map((m) => ({
      name: `dedup.e2e_batch_msgs_per_sec.${m}`,
      value: +e2e[m]!.toFixed(0),
      unit: "msgs/s",
      reference: +p64.toFixed(0),
      ratio: +(e2e[m]! / p64).toFixed(4),
    })),
  ];
}
