import { describe, expect, it } from "vitest";
import { HANDLER_POISONED_KEY, newMessage, REASON_POISONED_KEY, SUBSCRIBER_POISONED_KEY, TOPIC_POISONED_KEY } from "./message";
import { poisonQueue } from "./poison-queue";
import { MemoryPubSub } from "./pubsub";

function failingMsg() {
  const m = newMessage("01JD8X3Q", "payload", { metadata: { "Event-Type": "review.created" } });
  m.context = { handler: "on-review-created", topic: "demo.events", subscriber: "kafka" };
  return m;
}

describe("poisonQueue", () => {
  it("publishes a copy with the four poison keys and acks", async () => {
    const ps = new MemoryPubSub();
    const h = poisonQueue(ps, "demo.events.dlq")(async () => {
      throw new Error("db down");
    });
    await expect(h(failingMsg())).resolves.toBeUndefined();
    const [dlq] = ps.messages("demo.events.dlq");
    expect(dlq?.uuid).toBe("01JD8X3Q");
    expect(Buffer.from(dlq!.payload).toString()).toBe("payload");
    expect(dlq?.metadata).toMatchObject({
      "Event-Type": "review.created",
      [REASON_POISONED_KEY]: "db down",
      [TOPIC_POISONED_KEY]: "demo.events",
      [HANDLER_POISONED_KEY]: "on-review-created",
      [SUBSCRIBER_POISONED_KEY]: "kafka",
    });
  });

  it("does not ack when the DLQ publish fails: both errors propagate", async () => {
    const ps = new MemoryPubSub({ beforePublish: () => Promise.reject(new Error("broker unreachable")) });
    const h = poisonQueue(ps, "dlq")(async () => {
      throw new Error("db down");
    });
    const err = await h(failingMsg()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors.map((e: Error) => e.message)).toEqual(["db down", "broker unreachable"]);
  });

  it("lets errors the filter rejects propagate, and passes successes through untouched", async () => {
    const ps = new MemoryPubSub();
    const h = poisonQueue(ps, "dlq", { filter: (e) => e.message !== "transient" })(async () => {
      throw new Error("transient");
    });
    await expect(h(failingMsg())).rejects.toThrow("transient");
    expect(ps.messages("dlq")).toHaveLength(0);
    const ok = poisonQueue(ps, "dlq")(async () => [newMessage("c", "")]);
    await expect(ok(failingMsg())).resolves.toHaveLength(1);
  });

  it("rejects an empty topic at construction", () => {
    expect(() => poisonQueue(new MemoryPubSub(), "")).toThrow(RangeError);
    expect(() => poisonQueue(new MemoryPubSub(), "  ")).toThrow(/topic/);
  });
});
