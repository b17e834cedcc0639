import { describe, expect, it } from "vitest";
import { newMessage } from "../message";
import {
  HANDLER_POISONED_KEY,
  POISON_REASON_CLASSES,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
} from "../../../names/dedup";
import { poisonedCopyKey } from "../../../names/dlq";
import { Registry } from "prom-client";
import { DedupStoreError, InProgressError, NonRetryableError } from "../errors";
import { MemoryRepository } from "../repository/memory-repository";
import { poisonQueue, poisonReasonClass } from "./poison-queue";
import { MemoryPubSub } from "../pubsub";
import { DEFAULT_RUN_ONCE_OPTIONS } from "../repository/run-once";

function failingMsg() {
  const m = newMessage("01JD8X3Q", "payload", { metadata: { "Event-Type": "review.created" } });
  m.context = { handler: "on-review-created", topic: "demo.events", subscriber: "kafka" };
  return m;
}

describe("poisonQueue", () => {
  it("publishes a copy with the four poison keys and acks", async () => {
    const ps = new MemoryPubSub();
    const h = poisonQueue(
      ps,
      "demo.events.dlq",
    )(async () => {
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
    const h = poisonQueue(
      ps,
      "dlq",
    )(async () => {
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

  it("counts each DLQ publish in messages_poisoned_total by a bounded error class, not the message text", async () => {
    const registry = new Registry();
    const ps = new MemoryPubSub();
    const errors = [
      new Error("db down for 01JD8X3Q"),
      new Error("db down for 01JD8X3R"),
      new NonRetryableError("bad payload"),
    ];
    for (const e of errors) {
      await poisonQueue(ps, "dlq", { registry, service: "notification" })(async () => {
        throw e;
      })(failingMsg());
    }
    const m = await registry.getSingleMetric("messages_poisoned_total")!.get();
    const byReason = Object.fromEntries(m.values.map((v) => [String(v.labels.reason_poisoned), v.value]));
    expect(byReason).toEqual({ handler_error: 2, non_retryable: 1 });
    expect(m.values[0]?.labels).toMatchObject({
      service: "notification",
      topic: "demo.events",
      handler: "on-review-created",
    });
    expect(ps.messages("dlq")).toHaveLength(3);
  });

  it("classifies store errors by their reason and keeps odd names label-safe", () => {
    expect(poisonReasonClass(new DedupStoreError("redis_timeout", "slow"))).toBe("redis_timeout");
    expect(poisonReasonClass(new DedupStoreError("marshal", "no key"))).toBe("marshal");
    expect(poisonReasonClass(new InProgressError("k"))).toBe("in_progress");
    const odd = new Error("x");
    odd.name = "Weird Name/💥";
    const reasonless = Object.assign(new Error("y"), { reason: "something else" });
    // Any error name or foreign `reason` falls into the bounded set: the label cannot grow.
    for (const e of [odd, reasonless, new SyntaxError("z"), new TypeError("t")])
      expect(poisonReasonClass(e)).toBe("handler_error");
    for (const e of [odd, new NonRetryableError("n"), new DedupStoreError("redis_conn", "c")])
      expect(POISON_REASON_CLASSES).toContain(poisonReasonClass(e));
  });

  it("counts nothing when the DLQ publish fails (the message was not poisoned, it is redelivered)", async () => {
    const registry = new Registry();
    const ps = new MemoryPubSub({ beforePublish: () => Promise.reject(new Error("broker unreachable")) });
    await poisonQueue(ps, "dlq", { registry })(async () => {
      throw new Error("db down");
    })(failingMsg()).catch(() => undefined);
    const m = await registry.getSingleMetric("messages_poisoned_total")!.get();
    expect(m.values).toEqual([]);
  });

  it("does not poison a delivery whose signal aborted (shutdown, crash): it propagates so the message is redelivered", async () => {
    const ps = new MemoryPubSub();
    const ac = new AbortController();
    const m = newMessage("01JD8X3Q", "payload", { signal: ac.signal });
    m.context = { handler: "on-review-created", topic: "demo.events", subscriber: "kafka" };
    const h = poisonQueue(
      ps,
      "dlq",
    )(async () => {
      ac.abort();
      throw new Error("retry sleep aborted");
    });
    await expect(h(m)).rejects.toThrow("retry sleep aborted");
    expect(ps.messages("dlq")).toHaveLength(0);
  });
});

describe("poisonQueue with a guard: one DLQ copy per poisoned delivery", () => {
  /** A delivery of the same message read at `offset` of partition 2 (Kafka and the embedded broker fill the position). */
  function delivery(offset: string | undefined, handler = "on-review-created") {
    const m = failingMsg();
    m.context = { ...m.context, handler, ...(offset === undefined ? {} : { partition: 2, offset }) };
    return m;
  }
  const failing = async (): Promise<undefined> => {
    throw new Error("db down");
  };
  const poisonedTotal = async (registry: Registry) =>
    (await registry.getSingleMetric("messages_poisoned_total")!.get()).values.reduce((a, v) => a + v.value, 0);

  it("the same position poisoned again (a re-read before the commit) is acked without a second copy and counted once", async () => {
    const ps = new MemoryPubSub();
    const guard = new MemoryRepository();
    const registry = new Registry();
    const h = poisonQueue(ps, "dlq", { guard, registry, service: "notification" })(failing);
    await expect(h(delivery("41"))).resolves.toBeUndefined();
    await expect(h(delivery("41"))).resolves.toBeUndefined();
    expect(ps.messages("dlq")).toHaveLength(1);
    expect(await poisonedTotal(registry)).toBe(1);
    // Remembered as the transports' copy of a record without a UUID is: `done`, for 7 days.
    const key = poisonedCopyKey({
      service: "notification",
      handler: "on-review-created",
      topic: "demo.events",
      partition: 2,
      offset: "41",
      uuid: "01JD8X3Q",
    });
    expect(guard.get(key)).toBe("done");
    expect(guard.pttl(key)).toBeGreaterThan(DEFAULT_RUN_ONCE_OPTIONS.ttlMs - 60_000);
  });

  it("another offset, another handler or no position at all: each failure publishes its own copy", async () => {
    const ps = new MemoryPubSub();
    const guard = new MemoryRepository();
    const h = poisonQueue(ps, "dlq", { guard })(failing);
    await h(delivery("41"));
    await h(delivery("42"));
    await h(delivery("41", "on-review-flagged"));
    // MemoryPubSub's deliveries have no partition / offset: published every time, as without a guard.
    await h(delivery(undefined));
    await h(delivery(undefined));
    expect(ps.messages("dlq")).toHaveLength(5);
  });

  it("a copy still being published by another read of the same position is not acked; once it is done, the re-read is acked without a copy", async () => {
    const ps = new MemoryPubSub();
    const guard = new MemoryRepository();
    const key = poisonedCopyKey({
      service: "unknown",
      handler: "on-review-created",
      topic: "demo.events",
      partition: 2,
      offset: "41",
      uuid: "01JD8X3Q",
    });
    await guard.claim(key, "processing:other-read", 30_000);
    const h = poisonQueue(ps, "dlq", { guard })(failing);
    const err = await h(delivery("41")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateError);
    expect((err as AggregateError).errors[1]).toBeInstanceOf(InProgressError);
    expect(ps.messages("dlq")).toHaveLength(0);
    await guard.compareAndSet(key, "processing:other-read", "done", 60_000);
    await expect(h(delivery("41"))).resolves.toBeUndefined();
    expect(ps.messages("dlq")).toHaveLength(0);
  });

  it("a guard store that fails or does not answer lets the copy through (fail-open), after guardTimeoutMs at most", async () => {
    const ps = new MemoryPubSub();
    const down = Object.assign(new MemoryRepository(), { claim: () => Promise.reject(new Error("ECONNREFUSED")) });
    await poisonQueue(ps, "dlq", { guard: down })(failing)(delivery("41"));
    const hung = Object.assign(new MemoryRepository(), { claim: () => new Promise<string | null>(() => undefined) });
    const started = Date.now();
    await poisonQueue(ps, "dlq", { guard: hung, guardTimeoutMs: 50 })(failing)(delivery("41"));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(ps.messages("dlq")).toHaveLength(2);
    expect(() => poisonQueue(ps, "dlq", { guardTimeoutMs: 0 })).toThrow(/guardTimeoutMs/);
  });

  it("a failed DLQ publish releases the position: the redelivery publishes the copy", async () => {
    let refuse = true;
    const ps = new MemoryPubSub({
      beforePublish: () => (refuse ? Promise.reject(new Error("broker unreachable")) : Promise.resolve()),
    });
    const guard = new MemoryRepository();
    const h = poisonQueue(ps, "dlq", { guard })(failing);
    await expect(h(delivery("41"))).rejects.toBeInstanceOf(AggregateError);
    refuse = false;
    await expect(h(delivery("41"))).resolves.toBeUndefined();
    expect(ps.messages("dlq")).toHaveLength(1);
  });
});
