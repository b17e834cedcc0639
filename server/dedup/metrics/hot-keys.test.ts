import { describe, expect, it } from "vitest";
import { deduplicator } from "../deduplicator/deduplicator";
import type { SwallowedCopy } from "./hot-key-sketch";
import { HotKeys, sampledDuplicateLog } from "./hot-keys";
import { HotKeysBoard, mergeHotKeys } from "./hot-keys-board";
import { MemoryRepository } from "../repository/memory-repository";
import { newMessage, type Message } from "../message";

const copy = (uuid: string, over: Partial<SwallowedCopy> = {}): SwallowedCopy => ({
  key: `svc:dedup:h:${uuid}`,
  uuid,
  handler: "h",
  topic: "in",
  cause: "republish",
  position: undefined,
  ...over,
});

/** A clock the test moves. */
function clock(start = 1_000_000_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe("hot keys: a space-saving sketch of swallowed copies", () => {
  it("a 500-copy storm of one UUID is at the top among 3000 other repeated UUIDs, in 20 counters", () => {
    const c = clock();
    const hot = new HotKeys({ capacity: 20 }, c.now);
    // Interleave: 3000 background UUIDs swallowed once or twice, the storm's copies spread among them.
    for (let i = 0; i < 3000; i++) {
      hot.record(copy(`bg-${i}`));
      if (i % 3 === 0) hot.record(copy(`bg-${i}`));
      if (i % 6 === 0) hot.record(copy("STORM", { cause: "redelivery", position: `in:0:${i}` }));
    }
    const t = hot.top("h")!;
    expect(t.keys).toHaveLength(20);
    expect(t.total).toBe(3000 + 1000 + 500);
    const top = t.keys[0]!;
    expect(top.uuid).toBe("STORM");
    // The true count (500) lies in [count − error, count].
    expect(top.count - top.error).toBeLessThanOrEqual(500);
    expect(top.count).toBeGreaterThanOrEqual(500);
    expect(top.byCause.redelivery).toBeGreaterThan(0);
    expect(top.lastPosition).toBe("in:0:2994");
  });

  it("counts are exact while the table has room", () => {
    const hot = new HotKeys({ capacity: 5 }, clock().now);
    for (let i = 0; i < 7; i++) hot.record(copy("A"));
    hot.record(copy("B", { cause: "redelivery" }));
    const t = hot.top("h")!;
    expect(t.keys.map((k) => [k.uuid, k.count, k.error])).toEqual([
      ["A", 7, 0],
      ["B", 1, 0],
    ]);
    expect(t.keys[1]!.byCause).toEqual({ redelivery: 1, republish: 0, unknown: 0 });
  });

  it("shows the current and the previous window, and forgets a window two turns old", () => {
    const c = clock(0);
    const hot = new HotKeys({ capacity: 5, windowMs: 60_000 }, c.now);
    c.t = 10_000;
    hot.record(copy("OLD"));
    c.t = 70_000; // next window: OLD still shown with it
    hot.record(copy("NEW"));
    expect(
      hot
        .top("h")!
        .keys.map((k) => k.uuid)
        .sort(),
    ).toEqual(["NEW", "OLD"]);
    expect(hot.top("h")!.since).toBe(0);
    c.t = 130_000; // two windows after OLD's: only NEW's window (now the previous one)
    expect(hot.top("h")!.keys.map((k) => k.uuid)).toEqual(["NEW"]);
    c.t = 250_000; // nothing swallowed for two windows: an empty table
    expect(hot.top("h")!.keys).toEqual([]);
  });

  it("keeps handlers apart and refuses a further handler beyond maxHandlers", () => {
    const hot = new HotKeys({ capacity: 3, maxHandlers: 2 }, clock().now);
    hot.record(copy("A", { handler: "h1" }));
    hot.record(copy("B", { handler: "h2" }));
    expect(hot.record(copy("C", { handler: "h3" }))).toBe(0);
    expect(hot.top("h1")!.keys.map((k) => k.uuid)).toEqual(["A"]);
    expect(hot.top("h3")).toBeUndefined();
  });

  it("merges replicas: a storm split over two sketches adds up, and a key one sketch evicted carries that sketch's floor as error", () => {
    const c = clock();
    const a = new HotKeys({ capacity: 3 }, c.now);
    const b = new HotKeys({ capacity: 3 }, c.now);
    for (let i = 0; i < 300; i++) a.record(copy("STORM"));
    for (let i = 0; i < 200; i++) b.record(copy("STORM"));
    for (let i = 0; i < 10; i++) b.record(copy(`b-${i}`)); // b's table is full: floor > 0
    a.record(copy("ONLY-A"));
    const t = mergeHotKeys("h", [a, b])!;
    expect(t.keys[0]!.uuid).toBe("STORM");
    expect(t.keys[0]!.count).toBe(500);
    expect(t.keys[0]!.error).toBe(0);
    expect(t.total).toBe(511);
    const onlyA = t.keys.find((k) => k.uuid === "ONLY-A");
    if (onlyA) expect(onlyA.count - onlyA.error).toBeLessThanOrEqual(1);
  });

  it("rejects out-of-range options naming the option", () => {
    expect(() => new HotKeys({ capacity: 0 })).toThrow(/capacity/);
    expect(() => new HotKeys({ windowMs: 10 })).toThrow(/windowMs/);
  });
});

describe("sampled logging of swallowed copies", () => {
  it("logs the 1st, 10th, 100th… copy of a key", () => {
    expect([1, 2, 9, 10, 11, 100, 500, 1000].map(sampledDuplicateLog)).toEqual([
      true,
      false,
      false,
      true,
      false,
      true,
      false,
      true,
    ]);
  });

  it("a UUID that replaces a counter in a full table is logged as its first copy, not at the replaced count", () => {
    const hot = new HotKeys({ capacity: 2 }, clock().now);
    for (let i = 0; i < 9; i++) hot.record(copy("A"));
    for (let i = 0; i < 9; i++) hot.record(copy("B"));
    expect(hot.record(copy("NEW"))).toBe(1);
    expect(hot.top("h")!.keys.find((k) => k.uuid === "NEW")).toMatchObject({ count: 10, error: 9 });
  });

  it("a Deduplicator with logDuplicates 'sampled' logs a 500-copy storm in 3 lines and puts it on the board", async () => {
    const board = new HotKeysBoard();
    const lines: string[] = [];
    const mw = deduplicator({
      repository: new MemoryRepository(),
      service: "svc",
      hotKeys: board,
      logDuplicates: "sampled",
      logger: (l) => lines.push(l),
    });
    const run = mw(async () => undefined);
    const deliver = (uuid: string, offset: number): Promise<unknown> => {
      const m: Message = newMessage(uuid, "payload");
      Object.assign(m.context, { topic: "in", handler: "h", partition: 0, offset: String(offset) });
      return run(m);
    };
    for (let i = 0; i < 501; i++) await deliver("STORM", 0); // the first runs, 500 are swallowed
    await deliver("OTHER", 1);
    await deliver("OTHER", 2);
    expect(lines).toHaveLength(4); // STORM copies 1, 10, 100; OTHER copy 1
    expect(lines[0]).toContain("uuid=STORM");
    expect(lines[0]).toContain("redelivery");
    const t = board.top("svc", "h")!;
    expect(t.keys[0]).toMatchObject({
      uuid: "STORM",
      count: 500,
      error: 0,
      key: "svc:dedup:h:STORM",
      lastPosition: "in:0:0",
    });
    expect(t.keys[0]!.byCause.redelivery).toBe(500);
    expect(t.keys[1]).toMatchObject({ uuid: "OTHER", count: 1 });
    expect(t.keys[1]!.byCause.republish).toBe(1);
    expect(board.top("other-service", "h")).toBeUndefined();
  });
});
