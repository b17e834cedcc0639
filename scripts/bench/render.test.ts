import { describe, expect, it } from "vitest";
import { FIGURES, renderBenchmarks, verdict, type BenchResult } from "./render";
import { fill, PROSE } from "./render/prose";

const row = (name: string, value: number | null, extra: Partial<BenchResult> = {}): BenchResult => ({
  name,
  value,
  unit: "ratio",
  reference: null,
  ratio: null,
  ...extra,
});

describe("verdict", () => {
  it("says by how much a minimum is missed, and when it is met", () => {
    expect(verdict({ value: 0.6, target: 0.8, goal: "min", unit: "ratio" })).toBe(
      "**missed** by 0.200 (25% of the target)",
    );
    expect(verdict({ value: 0.8, target: 0.8, goal: "min", unit: "ratio" })).toBe("met");
  });

  it("judges a signed error by its magnitude", () => {
    expect(verdict({ value: -0.32, target: 0.1, goal: "abs-max", unit: "fraction" })).toMatch(
      /^\*\*missed\*\* by 0.220/,
    );
    expect(verdict({ value: -0.09, target: 0.1, goal: "abs-max", unit: "fraction" })).toBe("met");
  });

  it("never calls a figure without a value met", () => {
    expect(verdict({ value: null, target: 3, goal: "max", unit: "us" })).toBe("**not measured**");
  });
});

describe("renderBenchmarks", () => {
  it("lists every required figure, marking the ones a run did not produce as not measured", () => {
    const md = renderBenchmarks([
      row("consumer.with_dedup_vs_floor", 0.55, { reference: 140_000, ratio: 0.55, command: "npm run bench:consumer" }),
    ]);
    for (const name of Object.keys(FIGURES)) expect(md).toContain(`\`${name}\``);
    const consumerLine = md.split("\n").find((l) => l.startsWith("| `consumer.with_dedup_vs_floor`"))!;
    expect(consumerLine).toContain("**missed** by 0.250");
    expect(consumerLine).toContain("`npm run bench:consumer`");
    const uiLine = md.split("\n").find((l) => l.startsWith("| `ui.overview_first_load_js_kb_gz`"))!;
    expect(uiLine).toContain("**not measured**");
  });

  it("calls the machine busy only when its load at the start was 1 or more", () => {
    const machine = (loadStart: number[]) => row("machine.nproc", 2, { detail: { loadStart, loadEnd: [3.2, 2, 2.3] } });
    const loadLine = (md: string) => md.split("\n").find((l) => l.startsWith("- Load average"))!;
    expect(loadLine(renderBenchmarks([machine([0.26, 1.75, 2.47])]))).toContain("quiet at the start");
    expect(loadLine(renderBenchmarks([machine([1.4, 1.2, 1])]))).toContain("**the machine was busy at the start**");
  });

  it("says ours ÷ the floor is bound by waiting only when CPU would allow more and ours idled more", () => {
    const variant = (v: string, cpu: number, idle: number) =>
      row(`consumer.msgs_per_sec.${v}`, 1000, {
        unit: "msgs/s",
        detail: { cpuUsPerMsg: cpu, profile: { sampledSeconds: 5, areas: { "(idle)": idle } } },
      });
    const rows = (oursCpu: number, oursIdle: number) => [
      variant("raw", 6.1, 0.05),
      variant("ours", oursCpu, oursIdle),
      variant("floor", 17.2, 0.02),
      row("consumer.with_dedup_vs_floor", 0.755, { reference: 1, ratio: 0.755 }),
    ];
    expect(renderBenchmarks(rows(20.4, 0.3))).toContain(
      "4. **Ours ÷ the floor is bound by waiting, not by CPU.** By CPU per message alone ours would reach floor ÷ ours = 0.843",
    );
    expect(renderBenchmarks(rows(24, 0.3))).not.toContain("bound by waiting"); // CPU allows only 0.717
    expect(renderBenchmarks(rows(20.4, 0.01))).not.toContain("bound by waiting");
  });

  it("keeps the table intact: no cell introduces an unescaped pipe", () => {
    const md = renderBenchmarks(Object.keys(FIGURES).map((n) => row(n, 1, { reference: 1, ratio: 1 })));
    const header = md.split("\n").find((l) => l.startsWith("| Figure | Value"))!;
    const cols = header.split("|").length;
    for (const l of md.split("\n").filter((x) => x.startsWith("| `"))) {
      if (Object.keys(FIGURES).some((n) => l.startsWith(`| \`${n}\``))) expect(l.split("|").length).toBe(cols);
    }
  });
});

describe("the words around the figures", () => {
  it("fill puts each value in its hole and refuses a template whose hole has no value", () => {
    expect(
      fill(PROSE.ciWall, { commit: "abc", finishedAt: "t", mode: "parallel", wall: "1,093", serial: "1,799" }),
    ).toBe(
      "`bash .ci/run` on a fresh clone of `abc` (finished t, parallel order): **1,093 s** wall; the same phases one after another 1,799 s.",
    );
    expect(() => fill("ratio {ratio}, load {load}" as string, { ratio: 1 } as never)).toThrow("no value for {load}");
  });

  it("a run with every section renders every explanation with its figures, no hole left open", () => {
    const perSec = (v: string, value: number, cpu: number): BenchResult =>
      row(`consumer.msgs_per_sec.${v}`, value, {
        unit: "msgs/s",
        reference: 100_000,
        ratio: value / 100_000,
        detail: { cpuUsPerMsg: cpu, redisCpuUsPerMsg: 3, rounds: [value, v === "ours" ? value * 1.5 : value * 1.2] },
      });
    const md = renderBenchmarks([
      row("machine.nproc", 4, { unit: "cores" }),
      row("consumer.loadavg_1m", 1.9, { unit: "load" }),
      ...["raw", "sub", "mem", "ours", "floor", "naive"].map((v, i) => perSec(v, 100_000 / (i + 1), 10 * (i + 1))),
      row("consumer.with_dedup_vs_floor", 0.5, {
        detail: { perRound: [0.5], referenceCpuUsPerMsg: 50, oursCpuUsPerMsg: 40 },
      }),
      ...["router", "retry", "deduplicator", "metrics"].map((id, i) =>
        row(`consumer.stack_cpu_us.${id}`, i + 1, { unit: "us/msg" }),
      ),
      row("consumer.redis_cpu_us_per_key.script.claim", 4, { unit: "us/key", detail: { clientUs: 2 } }),
      row("consumer.redis_cpu_us_per_key.script.done_set_get", 3, { unit: "us/key", detail: { clientUs: 1 } }),
      row("dedup.middleware_overhead_us", 9, { unit: "us" }),
      row("inspect.estimate_ms_1m_keys", 300, {
        unit: "ms",
        detail: { runs: [290, 300, 310], draws: 4000, method: "blocks from random SCAN cursors" },
      }),
      row("redis.bytes_per_key_projection_error", 0.01, { unit: "fraction" }),
      row("ci.wall_s", 1000, {
        unit: "s",
        reference: 1800,
        detail: {
          commit: "abc",
          phases: [{ phase: "unit", s: 60 }],
          steps: [{ step: "3: e2e with timing bounds", s: 182, cpuBusyPct: 52 }],
          cpuBusyS: 1500,
          cores: 2,
          cpuBusyPct: 75,
        },
      }),
    ]);
    expect(md).not.toMatch(/\{\w+\}|undefined|NaN/);
    expect(md).toContain(
      "Load average during the consumer benchmark: 1.90 on 4 cores. Per-round figures are in bench-results.json (`detail.rounds`); the widest spread between a variant's slowest and fastest round was 1.50× (ours); the table shows the medians.",
    );
    expect(md).toContain(
      "1. **CPU per message on 4 cores (load average 1.90).** Raw kafkajs spends 10.0 µs per message",
    );
    expect(md).toContain(
      "- ours ÷ the floor: **0.500** (per round 0.500); floor 20,000 msgs/s at 50.0 µs CPU per message",
    );
    expect(md).toContain("- `dedup.middleware_overhead_us` = 9.00 µs: an absolute CPU time");
    expect(md).toContain(
      "- `inspect.estimate_ms_1m_keys` = 300.0 ms: the median of 5 runs (290, 300, 310 ms) of 4000 sampled keys (blocks from random SCAN cursors)",
    );
    expect(md).toContain("`bash .ci/run` on a fresh clone of `abc`");
    expect(md).toContain("busy 75 % of that run after `npm ci`");
    expect(md).toContain("1,500 CPU-seconds on 2 cores, so no order of the same work ends before 750 s of wall time.");
    expect(md).toContain("| 3: e2e with timing bounds | 182 | 52 % |");
  });

  it("gives what the inbox and the Kafka-transactions mode cost, and says not measured for a mode the run lacks", () => {
    const section = (md: string) => md.slice(md.indexOf("## What the stronger guarantees cost")).split("\n## ")[0]!;
    const line = (md: string, mode: string) =>
      section(md)
        .split("\n")
        .find((l) => l.startsWith(`| ${mode}`))!;
    const inbox = [
      row("dedup.inbox_us.added", 160, {
        unit: "µs/msg",
        reference: 550,
        command: "npm run bench:dedup -- --inbox-only",
      }),
      row("dedup.inbox_us.added_cpu", 20, { unit: "µs/msg" }),
      row("dedup.inbox_vs_floor", 0.77, { reference: 1818, detail: { inboxMsgsPerSec: 1408 } }),
    ];
    const md = renderBenchmarks(inbox);
    expect(line(md, "PostgreSQL inbox")).toContain("+160.0 µs wall, +20.0 µs CPU (plain transaction 550.0 µs)");
    expect(line(md, "PostgreSQL inbox")).toContain("0.770 (1,408 msgs/s, one at a time)");
    expect(line(md, "PostgreSQL inbox")).toContain("1,818 msgs/s");
    expect(line(md, "Kafka transactions")).toContain("**not measured**");
    expect(line(md, "Kafka transactions")).not.toMatch(/\| 0/);

    const tx = [
      row("consumer.kafka_tx_vs_floor", 0.05, {
        reference: 40_000,
        detail: { msgsPerSec: 2000 },
        command: "npm run bench:consumer -- --variants floor,relay,relaytx",
      }),
      row("consumer.kafka_tx_vs_plain_relay", 0.5, { reference: 4000 }),
      row("consumer.kafka_tx_added_cpu_us_per_msg", 75, { unit: "µs", reference: 135 }),
    ];
    const both = line(renderBenchmarks([...inbox, ...tx]), "Kafka transactions");
    expect(both).toContain("+75.0 µs CPU (plain relay 135.0 µs)");
    expect(both).toContain("0.050 (2,000 msgs/s); 0.500 of the plain relay's 4,000 msgs/s");
    expect(both).toContain("40,000 msgs/s");
    expect(both).toContain("`npm run bench:consumer -- --variants floor,relay,relaytx`");
  });
});
