/**
 * The DLQ states without a database (no DATABASE_URL): what the memory store keeps and how a
 * position's state is read against its partition's low watermark.
 */
import { describe, expect, it } from "vitest";
import { MemoryDlqStateStore, stateAt } from "./dlq-state";

describe("DLQ record states in memory", () => {
  it("keeps each position's latest resolution, per DLQ topic, and answers only those at or above the low watermark", async () => {
    const s = new MemoryDlqStateStore();
    await s.resolve("a.dlq", [
      { partition: 0, offset: "3", state: "discarded", who: "local", why: "a test order" },
      {
        partition: 0,
        offset: "7",
        state: "redriven",
        who: "token",
        to: { topic: "a", partition: 1, offset: "40", uuid: "u7" },
      },
      { partition: 1, offset: "2", state: "discarded", who: "local", why: "superseded" },
    ]);
    await s.resolve("b.dlq", [{ partition: 0, offset: "3", state: "discarded", who: "local", why: "other topic" }]);
    // Re-driven again by its UUID: the later resolution replaces the discard.
    await s.resolve("a.dlq", [
      { partition: 0, offset: "3", state: "redriven", who: "cli (sre)", to: { topic: "a", uuid: "u3" } },
    ]);

    const all = await s.resolved("a.dlq");
    expect([...all.keys()].sort()).toEqual(["0:3", "0:7", "1:2"]);
    expect(all.get("0:3")).toMatchObject({ state: "redriven", who: "cli (sre)", to: { topic: "a", uuid: "u3" } });
    // Retention moved partition 0's start past offset 3: that resolution is no longer in the log.
    expect([...(await s.resolved("a.dlq", new Map([[0, 4n]]))).keys()].sort()).toEqual(["0:7", "1:2"]);
  });

  it("reads a position below the low watermark as expired, a resolved one as its resolution, any other as open", async () => {
    const s = new MemoryDlqStateStore();
    await s.resolve("a.dlq", [{ partition: 0, offset: "5", state: "discarded", who: "local", why: "dup" }]);
    const r = await s.resolved("a.dlq");
    expect(stateAt(r, { partition: 0, offset: "2" }, 3n)).toEqual({ state: "expired" });
    expect(stateAt(r, { partition: 0, offset: "5" }, 3n)).toMatchObject({ state: "discarded", why: "dup" });
    expect(stateAt(r, { partition: 0, offset: "6" }, 3n)).toEqual({ state: "open" });
    expect(stateAt(r, { partition: 1, offset: "5" }, 0n)).toEqual({ state: "open" });
  });
});
