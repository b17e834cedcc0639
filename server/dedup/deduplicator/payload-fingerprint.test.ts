import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Deduplicator } from "./deduplicator";
import type { FingerprintOptions } from "./payload-fingerprint";
import { canonicalJson, PayloadFingerprints } from "./payload-fingerprint";
import { PayloadConflictError } from "../errors";
import type { Message } from "../message";
import { dedupMetrics } from "../metrics/metrics";
import { MemoryRepository } from "../repository/memory-repository";
import { payloadFingerprint } from "../repository/stored-value";
import { MemoryPubSub } from "../pubsub";
import { Router } from "../router/router";
import { poisonQueue } from "../middleware/poison-queue";

const signal = new AbortController().signal;

/** A copy of event `uuid` at `offset` with `payload` (an object is sent as JSON, a string as its bytes). */
function copy(uuid: string, offset: number, payload: object | string): Message {
  const text = typeof payload === "string" ? payload : JSON.stringify(payload);
  return {
    uuid,
    metadata: {},
    payload: Buffer.from(text),
    signal,
    context: { handler: "h", topic: "orders", partition: 0, offset: String(offset) },
  };
}

/** A Deduplicator on an in-memory store with `fingerprint`; what its handler ran and what was counted. */
function harness(fingerprint?: FingerprintOptions) {
  const registry = new Registry();
  const dedup = new Deduplicator({
    repository: new MemoryRepository(),
    service: "svc",
    registry,
    hotKeys: null,
    logger: () => undefined,
    ...(fingerprint ? { fingerprint } : {}),
  });
  const ran: string[] = [];
  const run = dedup.middleware(async (m) => void ran.push(Buffer.from(m.payload).toString()));
  /** Delivers `m`: "ran", "repeat" (swallowed) or "conflict" (PayloadConflictError). */
  const deliver = async (m: Message) => {
    const before = ran.length;
    try {
      await run(m);
    } catch (e) {
      if (e instanceof PayloadConflictError) return "conflict";
      throw e;
    }
    return ran.length > before ? "ran" : "repeat";
  };
  const fallbacks = async () =>
    (await dedupMetrics(registry).fingerprintFallbacks.get()).values.reduce((a, v) => a + v.value, 0);
  const conflicts = async () =>
    Object.fromEntries(
      (await dedupMetrics(registry).payloadConflicts.get()).values.map((v) => [String(v.labels.difference), v.value]),
    );
  return { deliver, conflicts, fallbacks, ran };
}

const order = { orderId: "o-1", total: 25, items: [{ sku: "A", qty: 1 }], sentAt: "2026-12-07T10:00:00Z" };

describe("fingerprint of chosen fields", () => {
  it("two payloads differing only in an excluded field are a repeat; in any other field, a conflict", async () => {
    const h = harness({ exclude: ["/sentAt"] });
    expect(await h.deliver(copy("e1", 1, order))).toBe("ran");
    // The producer's retry re-serialised the event: new sentAt, other key order.
    const retried = { sentAt: "2026-12-07T10:00:03Z", items: [{ qty: 1, sku: "A" }], total: 25, orderId: "o-1" };
    expect(await h.deliver(copy("e1", 2, retried))).toBe("repeat");
    expect(await h.deliver(copy("e1", 3, { ...order, total: 26 }))).toBe("conflict");
    expect(await h.deliver(copy("e1", 4, { ...order, items: [{ sku: "A", qty: 2 }] }))).toBe("conflict");
    expect(h.ran).toHaveLength(1);
    expect(await h.conflicts()).toEqual({ fields: 2, bytes: 0 });
    expect(await h.fallbacks()).toBe(0);
  });

  it("with include, only the included fields count: another included value is a conflict, any other change a repeat", async () => {
    const h = harness({ include: ["/orderId", "/total"] });
    expect(await h.deliver(copy("i1", 1, order))).toBe("ran");
    expect(await h.deliver(copy("i1", 2, { ...order, sentAt: "later", items: [] }))).toBe("repeat");
    expect(await h.deliver(copy("i1", 3, { ...order, total: 30 }))).toBe("conflict");
    // A missing included field is not the same as a present one.
    expect(await h.deliver(copy("i1", 4, { orderId: "o-1" }))).toBe("conflict");
    expect(await h.conflicts()).toEqual({ fields: 2, bytes: 0 });
  });

  it("exclude reaches into arrays and escaped names (RFC 6901), before include selects", async () => {
    const h = harness({ include: ["/items"], exclude: ["/items/0/trace", "/a~1b"] });
    const first = { items: [{ sku: "A", trace: "t1" }], "a/b": 1 };
    expect(await h.deliver(copy("p1", 1, first))).toBe("ran");
    expect(await h.deliver(copy("p1", 2, { items: [{ sku: "A", trace: "t2" }], "a/b": 2 }))).toBe("repeat");
    expect(await h.deliver(copy("p1", 3, { items: [{ sku: "B", trace: "t1" }] }))).toBe("conflict");
  });

  it("a payload that is not JSON falls back to its bytes, and its conflict is counted as a bytes difference", async () => {
    const h = harness({ exclude: ["/sentAt"] });
    expect(await h.deliver(copy("n1", 1, "plain text v1"))).toBe("ran");
    expect(await h.deliver(copy("n1", 2, "plain text v1"))).toBe("repeat");
    expect(await h.deliver(copy("n1", 3, "plain text v2"))).toBe("conflict");
    expect(await h.conflicts()).toEqual({ fields: 0, bytes: 1 });
    // Counted per fingerprint taken over the bytes: the done mark, the repeat and the conflicting copy.
    expect(await h.fallbacks()).toBe(3);
    expect(new PayloadFingerprints({ exclude: ["/x"] }).of(Buffer.from("not json"))).toBe(
      payloadFingerprint(Buffer.from("not json")),
    );
  });

  it("without the option the bytes are compared: a re-serialised retry is a conflict, counted as bytes", async () => {
    const h = harness();
    expect(await h.deliver(copy("b1", 1, order))).toBe("ran");
    expect(await h.deliver(copy("b1", 2, { ...order, sentAt: "later" }))).toBe("conflict");
    expect(await h.conflicts()).toEqual({ fields: 0, bytes: 1 });
  });

  it("canonical JSON sorts keys at every depth and keeps array order", () => {
    expect(canonicalJson(JSON.parse('{"b":1,"a":{"d":[2,1],"c":null}}'))).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    const fp = new PayloadFingerprints({ exclude: [] as string[] });
    expect(fp.chosen).toBe(false);
    const whole = new PayloadFingerprints({ include: [""] });
    expect(whole.of(Buffer.from('{"a":1, "b":2}'))).toBe(whole.of(Buffer.from('{"b":2,"a":1}')));
  });

  it("malformed pointers and an empty include are refused at construction, naming the option", () => {
    const make = (fingerprint: FingerprintOptions) =>
      new Deduplicator({ repository: new MemoryRepository(), fingerprint, hotKeys: null });
    expect(() => make({ exclude: ["sentAt"] })).toThrow(/fingerprint\.exclude must hold JSON Pointers/);
    expect(() => make({ include: ["/a~2"] })).toThrow(/fingerprint\.include must hold JSON Pointers/);
    expect(() => make({ include: [] })).toThrow(/fingerprint\.include must name at least one field/);
  });

  it("a Router batch compares by the same chosen fields: a retry in the same batch or the next is a repeat, a changed field poisoned", async () => {
    const registry = new Registry();
    const dlq = new MemoryPubSub();
    const ran: string[] = [];
    const router = new Router({ onError: (e) => console.error(e.error) });
    router.addHandler({
      name: "h",
      topic: "orders",
      subscriber: new MemoryPubSub(),
      handler: async (m) => void ran.push(Buffer.from(m.payload).toString()),
      middleware: [
        poisonQueue(dlq, "orders.dlq", { registry, service: "svc" }),
        new Deduplicator({
          repository: new MemoryRepository(),
          service: "svc",
          registry,
          hotKeys: null,
          logger: () => undefined,
          fingerprint: { exclude: ["/sentAt"] },
        }).middleware,
      ],
    });
    const sink = router.sink("h");
    const retried = { ...order, sentAt: "2026-12-07T10:00:09Z" };
    expect(await sink.deliverBatch([copy("b1", 1, order), copy("b1", 2, retried)])).toEqual(["ack", "ack"]);
    await sink.flush?.();
    expect(await sink.deliverBatch([copy("b1", 3, retried), copy("b1", 4, { ...order, total: 1 })])).toEqual([
      "ack",
      "ack",
    ]);
    await sink.flush?.();
    expect(ran).toHaveLength(1);
    expect(dlq.messages("orders.dlq").map((m) => JSON.parse(Buffer.from(m.payload).toString()).total)).toEqual([1]);
  });
});
