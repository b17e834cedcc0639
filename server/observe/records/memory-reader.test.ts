import { describe, expect, it } from "vitest";
import { MemoryBroker } from "@/server/transport/memory-broker";
import { TopicMissingError } from "./log-reader";
import { MEMORY_FETCH_MAX_RECORDS, MemoryLogReader } from "./memory-reader";
import { scanNewestFirst } from "./scan";

const rec = (i: number) => ({
  headers: { _watermill_message_uuid: `u${i}`, "Event-Type": "x" },
  value: Buffer.from(`{"i":${i}}`),
});

describe("MemoryLogReader: the embedded broker's log read like Kafka's", () => {
  it("partitions run from 0 to the number of records; a fetch reads from the offset, at least one record and about maxBytes", async () => {
    const b = new MemoryBroker();
    b.createTopic("t", 2);
    for (let i = 0; i < 5; i++) b.produce("t", rec(i), 1);
    const r = new MemoryLogReader(b);
    expect(await r.ranges("t")).toEqual([
      { partition: 0, low: 0n, high: 0n },
      { partition: 1, low: 0n, high: 5n },
    ]);
    const got = await r.fetchFrom("t", 1, 2n, 1_000_000);
    expect(got.map((x) => [x.offset, x.value?.toString(), x.headers._watermill_message_uuid, x.key])).toEqual([
      [2n, '{"i":2}', "u2", null],
      [3n, '{"i":3}', "u3", null],
      [4n, '{"i":4}', "u4", null],
    ]);
    expect(got[0]!.timestamp).toBeGreaterThan(Date.now() - 60_000);
    expect(await r.fetchFrom("t", 1, 1n, 1)).toHaveLength(1);
    expect(await r.fetchFrom("t", 1, 5n, 1000)).toEqual([]);
  });

  it("a fetch returns at most MEMORY_FETCH_MAX_RECORDS records, however many fit in its bytes", async () => {
    const b = new MemoryBroker();
    b.createTopic("t", 1);
    for (let i = 0; i < MEMORY_FETCH_MAX_RECORDS + 10; i++) b.produce("t", rec(i));
    const got = await new MemoryLogReader(b).fetchFrom("t", 0, 5n, 1 << 30);
    expect(got).toHaveLength(MEMORY_FETCH_MAX_RECORDS);
    expect(got.at(-1)!.offset).toBe(BigInt(MEMORY_FETCH_MAX_RECORDS + 4));
  });

  it("a topic the broker does not hold is a TopicMissingError (a 404 for the routes)", async () => {
    const r = new MemoryLogReader(new MemoryBroker());
    await expect(r.ranges("nope")).rejects.toBeInstanceOf(TopicMissingError);
    await expect(r.fetchFrom("nope", 0, 0n, 10)).rejects.toBeInstanceOf(TopicMissingError);
  });

  it("the bounded newest-first scan stops at its record bound on the embedded log too", async () => {
    const b = new MemoryBroker();
    b.createTopic("t", 1);
    for (let i = 0; i < 1200; i++) b.produce("t", rec(i));
    const seen: bigint[] = [];
    const s = await scanNewestFirst(
      new MemoryLogReader(b),
      "t",
      null,
      { records: 1000, bytes: 1 << 30, ms: 60_000 },
      (x) => seen.push(x.offset),
    );
    expect(s.complete).toBe(false);
    expect(s.scanned.records).toBe(1000);
    expect(seen[0]).toBe(1199n);
    expect(s.left.get(0)).toBe(200n);
  });
});

describe("scanNewestFirst makes progress whatever the records' size", () => {
  it("40 records of 900 kB (a window above the 32 MiB bound): the newest are visited and the cursor moves, page after page to the start", async () => {
    const b = new MemoryBroker();
    b.createTopic("big", 1);
    const big = "x".repeat(900 * 1024);
    for (let i = 0; i < 40; i++)
      b.produce("big", { headers: { _watermill_message_uuid: `u${i}` }, value: Buffer.from(big) });
    const limits = { records: 20_000, bytes: 32 * 1024 * 1024, ms: 60_000 };
    const seen: bigint[] = [];
    let from: Map<number, bigint> | null = null;
    for (let page = 0; page < 10; page++) {
      const s = await scanNewestFirst(new MemoryLogReader(b), "big", from, limits, (x) => seen.push(x.offset));
      expect(s.scanned.bytes).toBeLessThanOrEqual(2 * limits.bytes);
      // Before: the window was cut unvisited, nothing was seen and the cursor stayed at 40 forever.
      expect(s.scanned.records, `page ${page}`).toBeGreaterThan(0);
      if (s.complete) break;
      from = s.left;
    }
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => BigInt(39 - i)));
  });
});
