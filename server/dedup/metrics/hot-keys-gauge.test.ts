import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { HOT_UUID_METRICS, HOT_UUID_TOP_K } from "../../../names/dedup";
import { HotKeys } from "./hot-keys";
import { HotKeysBoard } from "./hot-keys-board";
import { exportHotUuids } from "./hot-keys-gauge";

const copy = (uuid: string) => ({
  key: `svc:dedup:h:${uuid}`,
  uuid,
  handler: "h",
  topic: "t",
  cause: "republish" as const,
  position: undefined,
});

async function exported(registry: Registry): Promise<{ uuids: Map<string, number>; bound: number | undefined }> {
  const copies = await registry.getSingleMetric(HOT_UUID_METRICS.copies)!.get();
  const bound = await registry.getSingleMetric(HOT_UUID_METRICS.errorBound)!.get();
  return {
    uuids: new Map(copies.values.map((v) => [String(v.labels.uuid), v.value])),
    bound: bound.values.find((v) => v.labels.handler === "h")?.value,
  };
}

describe("the exported hot UUIDs", () => {
  it("are the top 10 of the process's merged sketches, and a UUID that drops out of the top 10 leaves the gauge", async () => {
    const t = 1_000_000;
    const board = new HotKeysBoard(512, () => t);
    const a = board.add("svc", new HotKeys({}, () => t));
    const b = board.add("svc", new HotKeys({}, () => t));
    const registry = new Registry();
    exportHotUuids(registry, "svc", board);
    // Two replicas of one process: u0..u9 twice each on A, "late" once on B.
    for (let i = 0; i < HOT_UUID_TOP_K; i++) for (let n = 0; n < 2; n++) a.record(copy(`u${i}`));
    b.record(copy("late"));
    let e = await exported(registry);
    expect(e.uuids.size).toBe(HOT_UUID_TOP_K);
    expect(e.uuids.has("late")).toBe(false);
    // The 11th row's count bounds what a UUID not listed may have had.
    expect(e.bound).toBe(1);
    // "late" becomes the storm (its copies on both replicas add up); u9, the last of the ten, leaves.
    for (let n = 0; n < 3; n++) a.record(copy("late"));
    for (let n = 0; n < 3; n++) b.record(copy("late"));
    e = await exported(registry);
    expect(e.uuids.get("late")).toBe(7);
    expect(e.uuids.size).toBe(HOT_UUID_TOP_K);
    expect([...e.uuids.keys()].filter((u) => u.startsWith("u"))).toHaveLength(HOT_UUID_TOP_K - 1);
  });

  it("a handler registered before its first copy exports a bound of 0 (measured, nothing swallowed), not nothing", async () => {
    const board = new HotKeysBoard();
    const h = board.add("svc", new HotKeys());
    h.track("h");
    const registry = new Registry();
    exportHotUuids(registry, "svc", board);
    const e = await exported(registry);
    expect(e.bound).toBe(0);
    expect(e.uuids.size).toBe(0);
  });
});
