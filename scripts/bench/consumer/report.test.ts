import { afterEach, describe, expect, it, vi } from "vitest";
import { report } from "./report";
import type { RoundResult } from "./rounds";
import { parseVariants, VARIANTS, type Variant } from "./variants";

/**
 * Two rounds per variant at the given msgs/s; CPU 10 µs/msg + the Redis server's 4 for the variants
 * that use Redis, + 7 for the transactional relay's producer.
 */
function rounds(perSec: Record<Variant, [number, number]>): RoundResult[] {
  return Object.entries(perSec).flatMap(([variant, rates]) =>
    rates.map((rate, i) => {
      const redis = ["ours", "rel", "floor", "naive", "relaydedup"].includes(variant) ? 4 : 0;
      return {
        variant: variant as Variant,
        round: i + 1,
        messages: 1000,
        seconds: 1000 / rate,
        wallSeconds: 1000 / rate + 1,
        perSec: rate,
        cpuUsPerMsg: 10 + redis + (variant === "relaytx" ? 7 : 0),
        redisCpuUsPerMsg: redis,
        redisCmdUsPerMsg: redis / 2,
      };
    }),
  );
}

describe("bench:consumer's figures", () => {
  afterEach(() => vi.restoreAllMocks());
  const all = [...VARIANTS];
  const results = rounds({
    raw: [100, 200],
    ours: [40, 60],
    sub: [80, 100],
    mem: [60, 80],
    rel: [50, 70],
    floor: [60, 100],
    naive: [20, 30],
    relay: [90, 110],
    relaytx: [60, 80],
    relaydedup: [30, 50],
  });

  it("names every row npm run bench reads, with the medians' ratios and the goals on ours", () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const rows = report(
      all,
      2,
      { results, profiles: new Map(), redisPerMsg: [{ execUs: 1, cpuUs: 2, calls: 3 }] },
      [1, 1, 1],
      [3, 1, 1],
    );
    expect(rows.map((r) => r.name)).toEqual([
      "consumer.with_dedup_vs_raw_kafkajs",
      "consumer.subscriber_only_vs_raw_kafkajs",
      "consumer.stack_memory_store_vs_raw_kafkajs",
      "consumer.with_dedup_release_marking_vs_raw_kafkajs",
      "consumer.floor_vs_raw_kafkajs",
      "consumer.naive_peer_vs_raw_kafkajs",
      "consumer.relay_vs_raw_kafkajs",
      "consumer.relay_transactions_vs_raw_kafkajs",
      "consumer.relay_redis_dedup_vs_raw_kafkajs",
      "consumer.with_dedup_vs_floor",
      "consumer.with_dedup_vs_naive_peer",
      "consumer.kafka_tx_vs_floor",
      "consumer.kafka_tx_vs_plain_relay",
      "consumer.kafka_tx_added_cpu_us_per_msg",
      ...all.map((v) => `consumer.msgs_per_sec.${v}`),
      ...["kafkajs", "transport", "stack", "redis_client", "redis_server"].map(
        (p) => `consumer.cpu_budget_us_per_msg.${p}`,
      ),
      "consumer.loadavg_1m",
    ]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    // Medians: raw 150, ours 50, floor 80, naive 25.
    expect(byName.get("consumer.with_dedup_vs_raw_kafkajs")).toMatchObject({
      value: 0.3333,
      reference: 150,
      target: 0.5,
      detail: { perRound: [0.4, 0.3] },
    });
    expect(byName.get("consumer.subscriber_only_vs_raw_kafkajs")!.target).toBeUndefined();
    expect(byName.get("consumer.with_dedup_vs_floor")).toMatchObject({ value: 0.625, reference: 80, target: 0.8 });
    expect(byName.get("consumer.with_dedup_vs_naive_peer")).toMatchObject({ value: 2, reference: 25, target: 4 });
    expect(Object.keys(byName.get("consumer.msgs_per_sec.ours")!.detail as object)).toEqual([
      "rounds",
      "cpuUsPerMsg",
      "redisCpuUsPerMsg",
      "redisCmdUsPerMsg",
      "profile",
      "redisPerMsg",
    ]);
    expect(byName.get("consumer.msgs_per_sec.ours")).toMatchObject({
      value: 50,
      ratio: 0.3333,
      detail: {
        rounds: [40, 60],
        cpuUsPerMsg: 14,
        redisCpuUsPerMsg: 4,
        redisPerMsg: [{ execUs: 1, cpuUs: 2, calls: 3 }],
      },
    });
    // The budget splits ours' process CPU by layer (all 10 µs here are kafkajs') and puts the Redis server apart.
    expect(byName.get("consumer.cpu_budget_us_per_msg.kafkajs")!.value).toBe(10);
    expect(byName.get("consumer.cpu_budget_us_per_msg.redis_server")!.value).toBe(4);
    expect(byName.get("consumer.loadavg_1m")!.value).toBe(2);
  });

  it("measures the Kafka-transactions mode against the floor and the plain relay: throughput ratios and the CPU it adds", () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const only = (vs: Variant[]) =>
      report(
        vs,
        2,
        { results: results.filter((r) => vs.includes(r.variant)), profiles: new Map(), redisPerMsg: [] },
        [1, 1, 1],
        [1, 1, 1],
      );
    const byName = new Map(only(["floor", "relay", "relaytx", "relaydedup"]).map((r) => [r.name, r]));
    // Medians: floor 80, relay 100, relaytx 70; CPU relay 10, relaytx 17, relaydedup 14 (Redis server's included).
    expect(byName.get("consumer.kafka_tx_vs_floor")).toMatchObject({
      value: 0.875,
      reference: 80,
      detail: { perRound: [1, 0.8], msgsPerSec: 70 },
    });
    expect(byName.get("consumer.kafka_tx_vs_plain_relay")).toMatchObject({ value: 0.7, reference: 100 });
    expect(byName.get("consumer.kafka_tx_added_cpu_us_per_msg")).toMatchObject({
      value: 7,
      unit: "us/msg",
      reference: 10,
      ratio: 1.7,
      detail: { cpuUsPerMsg: 17, redisModeAddedCpuUsPerMsg: 4 },
    });
    // Without the transactions mode in the run there is nothing to report; without its references, only what they allow.
    expect(only(["floor", "relay"]).some((r) => String(r.name).startsWith("consumer.kafka_tx"))).toBe(false);
    expect(
      only(["relaytx", "floor"])
        .filter((r) => String(r.name).startsWith("consumer.kafka_tx"))
        .map((r) => r.name),
    ).toEqual(["consumer.kafka_tx_vs_floor"]);
  });

  it("without raw in the run, reports each variant's msgs/s alone", () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const rows = report(
      ["floor", "ours"],
      2,
      {
        results: results.filter((r) => r.variant === "floor" || r.variant === "ours"),
        profiles: new Map(),
        redisPerMsg: [],
      },
      [1, 1, 1],
      [1, 1, 1],
    );
    expect(rows.map((r) => r.name)).toEqual([
      "consumer.with_dedup_vs_floor",
      "consumer.msgs_per_sec.floor",
      "consumer.msgs_per_sec.ours",
      "consumer.loadavg_1m",
    ]);
    expect(rows[1]).toMatchObject({ reference: null, ratio: null });
  });

  it("--variants takes only the consumers it knows, naming them when it refuses", () => {
    expect(parseVariants("raw,ours,floor")).toEqual(["raw", "ours", "floor"]);
    expect(() => parseVariants("raw,cas")).toThrow(
      "bench-consumer: --variants must list raw, ours, sub, mem, rel, floor, naive, relay, relaytx, relaydedup (got cas)",
    );
  });
});
