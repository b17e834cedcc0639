/**
 * "## What the stronger guarantees cost": the PostgreSQL inbox (bench step `inbox`) and the
 * Kafka-transactions mode (bench step `transactions`), each per message and against its floor — a
 * mode the run did not measure says so, never a zero.
 */
import type { BenchResult } from "./figures";
import { detailOf, get, num } from "./format";

type Rows = readonly BenchResult[];

const NOT_MEASURED = "**not measured**";

/** One mode's line: its cost per message, its throughput against the floor, the floor, how to reproduce. */
interface ModeLine {
  mode: string;
  perMessage: string;
  vsFloor: string;
  floor: string;
  command: string;
}

function inboxLine(rs: Rows): ModeLine {
  const added = get(rs, "dedup.inbox_us.added");
  const cpu = get(rs, "dedup.inbox_us.added_cpu");
  const ratio = get(rs, "dedup.inbox_vs_floor");
  const d = detailOf<{ inboxMsgsPerSec?: number }>(ratio);
  return {
    mode: "PostgreSQL inbox (`inbox`): the claim row in the handler's transaction",
    perMessage: added
      ? `+${num(added.value, "µs")} wall, +${num(cpu?.value ?? null, "µs")} CPU (plain transaction ${num(added.reference, "µs")})`
      : NOT_MEASURED,
    vsFloor: ratio ? `${num(ratio.value)} (${num(d.inboxMsgsPerSec ?? null)} msgs/s, one at a time)` : NOT_MEASURED,
    floor: ratio
      ? `a plain transaction with the same INSERT, ${num(ratio.reference)} msgs/s`
      : "a plain transaction with the same INSERT",
    command: (ratio ?? added)?.command ?? "npm run bench -- --only inbox",
  };
}

function transactionsLine(rs: Rows): ModeLine {
  const cpu = get(rs, "consumer.kafka_tx_added_cpu_us_per_msg");
  const floor = get(rs, "consumer.kafka_tx_vs_floor");
  const relay = get(rs, "consumer.kafka_tx_vs_plain_relay");
  const d = detailOf<{ msgsPerSec?: number }>(floor ?? relay);
  return {
    mode: "Kafka transactions (`relaytx`): outputs and offsets in one transaction per chunk",
    perMessage: cpu ? `+${num(cpu.value, "µs")} CPU (plain relay ${num(cpu.reference, "µs")})` : NOT_MEASURED,
    vsFloor: floor
      ? `${num(floor.value)} (${num(d.msgsPerSec ?? null)} msgs/s)${relay ? `; ${num(relay.value)} of the plain relay's ${num(relay.reference)} msgs/s` : ""}`
      : NOT_MEASURED,
    floor: floor
      ? `the floor of \`consumer.with_dedup_vs_floor\`, ${num(floor.reference)} msgs/s`
      : "the floor of `consumer.with_dedup_vs_floor`",
    command: (floor ?? cpu)?.command ?? "npm run bench -- --only transactions",
  };
}

/** The section: one line per stronger mode, measured or not. */
export function guaranteesSection(rs: Rows): string[] {
  const L = [
    "## What the stronger guarantees cost",
    "",
    "Per message, against the same handler without the guarantee, and throughput against the floor (medians of the run; docs/LIBRARY.md's marking table).",
    "",
    "| Mode | Cost per message | Throughput ÷ floor | Floor (same run) | Reproduce |",
    "|---|---|---|---|---|",
  ];
  for (const m of [inboxLine(rs), transactionsLine(rs)])
    L.push(`| ${m.mode} | ${m.perMessage} | ${m.vsFloor} | ${m.floor} | \`${m.command}\` |`);
  L.push("");
  return L;
}
