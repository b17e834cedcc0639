import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  countPush,
  MemorySideEffectStore,
  SIDE_EFFECT_METRICS,
  sideEffectCounters,
  type PushResult,
} from "./side-effects";

/** The in-process push provider: deliveries, duplicates and re-sends absorbed by idempotency key. */
describe("MemorySideEffectStore push provider", () => {
  it("without a key every call delivers: a second call for the same event id is a duplicate", async () => {
    const s = new MemorySideEffectStore();
    expect(await s.push("h", "e1")).toEqual({ duplicate: false, absorbed: false });
    expect(await s.push("h", "e1")).toEqual({ duplicate: true, absorbed: false });
    expect(s.ledgerRow("h", "e1")).toEqual({ pushes: 2, attempts: 2 });
  });

  it("with a key already delivered for the handler nothing is delivered again: the call is an absorbed re-send", async () => {
    const s = new MemorySideEffectStore();
    expect(await s.push("h", "e1", { idempotencyKey: "k1" })).toEqual({ duplicate: false, absorbed: false });
    expect(await s.push("h", "e1", { idempotencyKey: "k1" })).toEqual({ duplicate: false, absorbed: true });
    expect(await s.push("h", "e1", { idempotencyKey: "k1" })).toEqual({ duplicate: false, absorbed: true });
    expect(s.ledgerRow("h", "e1")).toEqual({ pushes: 1, attempts: 3 });
  });

  it("keys are per handler, and a new key for an event id already delivered delivers again (a duplicate)", async () => {
    const s = new MemorySideEffectStore();
    await s.push("a", "e1", { idempotencyKey: "k1" });
    expect(await s.push("b", "e1", { idempotencyKey: "k1" })).toEqual({ duplicate: false, absorbed: false });
    expect(await s.push("a", "e1", { idempotencyKey: "k2" })).toEqual({ duplicate: true, absorbed: false });
    expect(await s.push("a", "e1")).toEqual({ duplicate: true, absorbed: false });
    expect(s.ledgerRow("a", "e1")).toEqual({ pushes: 3, attempts: 3 });
  });

  it("a re-send absorbed by key counts as an attempt on the delivery that key made", async () => {
    const s = new MemorySideEffectStore();
    await s.push("h", "e1", { idempotencyKey: "k" });
    expect(await s.push("h", "e2", { idempotencyKey: "k" })).toEqual({ duplicate: false, absorbed: true });
    expect(s.ledgerRow("h", "e1")).toEqual({ pushes: 1, attempts: 2 });
    expect(s.ledgerRow("h", "e2")).toEqual({ pushes: 0, attempts: 0 });
  });

  it("the key closes the window spec §5 leaves: a send whose record rolled back after the push is absorbed on redelivery", async () => {
    const seen: PushResult[] = [];
    const s = new MemorySideEffectStore((_h, _id, r) => seen.push(r));
    const send = (crash: boolean) =>
      s.sendOnce("h", "e1", async () => {
        await s.push("h", "e1", { idempotencyKey: "e1" });
        if (crash) throw new Error("crashed before COMMIT"); // the record rolls back, as with a kill
      });
    await expect(send(true)).rejects.toThrow("crashed before COMMIT");
    expect(await send(false)).toBe("sent"); // the record was rolled back: the handler sends again…
    expect(seen).toEqual([
      { duplicate: false, absorbed: false },
      { duplicate: false, absorbed: true }, // …and the provider delivers nothing new
    ]);
    expect(await send(false)).toBe("skipped");
  });

  it("countPush counts a delivery in sent (and duplicate), an absorbed re-send only in demo_push_resends_absorbed_total", async () => {
    const registry = new Registry();
    const c = sideEffectCounters(registry);
    countPush(c, "h", { duplicate: false, absorbed: false });
    countPush(c, "h", { duplicate: true, absorbed: false });
    countPush(c, "h", { duplicate: false, absorbed: true });
    const value = async (name: string) =>
      (await registry.getSingleMetric(name)!.get()).values.find((v) => v.labels.handler === "h")?.value ?? 0;
    expect(await value(SIDE_EFFECT_METRICS.sent)).toBe(2);
    expect(await value(SIDE_EFFECT_METRICS.duplicate)).toBe(1);
    expect(await value(SIDE_EFFECT_METRICS.absorbed)).toBe(1);
    expect(sideEffectCounters(registry).absorbed).toBe(c.absorbed); // get-or-create
  });
});
