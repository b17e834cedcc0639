import { describe, expect, it } from "vitest";
import { MemoryPubSub } from "@/server/dedup";
import { POISON_REASON_CLASS, REASON_CLASS_POISONED_KEY, REASON_POISONED_KEY, TOPIC_POISONED_KEY } from "@/names/dedup";
import { REDRIVEN_FROM_UUID_KEY } from "@/names/dlq";
import {
  CONFLICT_LOOP_WHY,
  redriveMessage,
  redrivePacer,
  redriveTarget,
  redriveUuid,
  type DlqMessage,
} from "./dlq-redrive";

const allow = new Set(["orders"]);
const at = { topic: "orders.dlq", partition: 2, offset: "41" };
const conflict = (over: Partial<DlqMessage> = {}): DlqMessage => ({
  uuid: "u-1",
  metadata: {
    [TOPIC_POISONED_KEY]: "orders",
    [REASON_CLASS_POISONED_KEY]: POISON_REASON_CLASS.payloadConflict,
    [REASON_POISONED_KEY]: "payload conflict on k: …",
    "Event-Type": "x",
  },
  payload: Buffer.from("p2"),
  key: Buffer.from("order-7"),
  position: at,
  ...over,
});

describe("redriveTarget / redriveMessage", () => {
  it("a payload conflict goes out with a new UUID derived from its DLQ position by default, the original in redriven_from_uuid, with its key", async () => {
    const bus = new MemoryPubSub();
    const to = await redriveMessage(bus, conflict(), allow);
    expect(to).toEqual({ topic: "orders", uuid: redriveUuid(at) });
    const [sent] = bus.messages("orders");
    expect(sent?.uuid).toBe(redriveUuid(at));
    expect(sent?.metadata).toEqual({ "Event-Type": "x", [REDRIVEN_FROM_UUID_KEY]: "u-1" });
    expect(redriveUuid(at)).toBe(redriveUuid({ ...at }));
    expect(redriveUuid(at)).not.toBe(redriveUuid({ ...at, offset: "42" }));
  });

  it("refuses a same-UUID re-drive of a payload conflict (it would loop) and a new UUID without a DLQ position", () => {
    expect(redriveTarget(conflict(), allow, "same-uuid")).toEqual({ ok: false, why: CONFLICT_LOOP_WHY });
    const { position: _, ...noPosition } = conflict();
    expect(redriveTarget(noPosition, allow, "new-uuid")).toMatchObject({ ok: false });
  });

  it("any other record keeps its UUID by default", () => {
    const m = conflict({ metadata: { [TOPIC_POISONED_KEY]: "orders", [REASON_POISONED_KEY]: "boom" } });
    expect(redriveTarget(m, allow)).toEqual({ ok: true, topic: "orders", mode: "same-uuid", uuid: "u-1" });
  });
});

describe("redrivePacer", () => {
  it("lets the n-th record go no earlier than n / rate seconds after the first", async () => {
    const pacer = redrivePacer(100);
    const t0 = Date.now();
    for (let i = 0; i < 21; i++) await pacer.wait();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(195);
    expect(() => redrivePacer(0)).toThrow(RangeError);
  });
});
