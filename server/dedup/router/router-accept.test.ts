import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Deduplicator } from "../deduplicator/deduplicator";
import { MemoryRepository } from "../repository/memory-repository";
import { dedupMetrics } from "../metrics/metrics";
import { newMessage, type Message } from "../message";
import { EVENT_TYPE_KEY } from "../../../names/dedup";
import { MemoryPubSub } from "../pubsub";
import type { ClaimReply, ClaimRequest } from "../repository/repository";
import { Router, type RouterErrorEvent } from "./router";

/** A MemoryRepository that records every claim it is asked for. */
class CountingRepository extends MemoryRepository {
  readonly claimed: string[] = [];
  override claim(key: string, value: string, ttlMs: number) {
    this.claimed.push(key);
    return super.claim(key, value, ttlMs);
  }
  override claimBatch(requests: readonly ClaimRequest[]): Promise<ClaimReply[]> {
    for (const r of requests) this.claimed.push(r.key);
    return super.claimBatch(requests);
  }
}

const typed = (uuid: string, type: string): Message => newMessage(uuid, "{}", { metadata: { [EVENT_TYPE_KEY]: type } });

function setup(accept: (m: Message) => boolean, fail: (m: Message) => boolean = () => false) {
  const registry = new Registry();
  const repo = new CountingRepository();
  const ran: string[] = [];
  const errors: RouterErrorEvent[] = [];
  const dedup = new Deduplicator({ repository: repo, service: "svc", registry });
  const router = new Router({ onError: (e) => errors.push(e) });
  router.addHandler({
    name: "h",
    topic: "t",
    subscriber: new MemoryPubSub(),
    middleware: [dedup.middleware],
    accept,
    handler: async (m) => {
      ran.push(m.uuid);
      if (fail(m)) throw new Error("handler failed");
    },
  });
  const processed = async () => (await dedupMetrics(registry).processed.get()).values.reduce((a, v) => a + v.value, 0);
  return { repo, ran, errors, sink: router.sink("h"), processed };
}

const mine = (m: Message) => m.metadata[EVENT_TYPE_KEY] === "mine";

describe("Router accept(msg): a handler claims keys only for the messages it takes", () => {
  it("a batch: the pre-claim covers only accepted messages; the others are acked untouched and not counted", async () => {
    const { repo, ran, sink, processed } = setup(mine);
    const msgs = [
      typed("a", "other"),
      typed("b", "mine"),
      typed("c", "other"),
      typed("d", "mine"),
      typed("e", "other"),
    ];
    expect(await sink.deliverBatch(msgs)).toEqual(["ack", "ack", "ack", "ack", "ack"]);
    await sink.flush?.();
    expect(ran).toEqual(["b", "d"]);
    expect(repo.claimed).toEqual(["svc:dedup:h:b", "svc:dedup:h:d"]);
    expect(repo.size()).toBe(2);
    expect(repo.get("svc:dedup:h:a")).toBeNull();
    expect(await processed()).toBe(2);
  });

  it("a single delivery the handler does not take touches no key and runs nothing", async () => {
    const { repo, ran, sink, processed } = setup(mine);
    expect(await sink.deliver(typed("x", "other"))).toBe("ack");
    expect(await sink.deliver(typed("y", "mine"))).toBe("ack");
    expect(ran).toEqual(["y"]);
    expect(repo.claimed).toEqual(["svc:dedup:h:y"]);
    expect(await processed()).toBe(1);
  });

  it("outcomes stay a prefix in batch order: a nack of an accepted message ends them, later skipped messages get none", async () => {
    const { ran, sink } = setup(mine, (m) => m.uuid === "d");
    const msgs = [
      typed("a", "other"),
      typed("b", "mine"),
      typed("c", "other"),
      typed("d", "mine"),
      typed("e", "other"),
      typed("f", "mine"),
    ];
    // No Retry/PoisonQueue here: the failure is a nack.
    expect(await sink.deliverBatch(msgs)).toEqual(["ack", "ack", "ack", "nack"]);
    expect(ran).toEqual(["b", "d"]);
  });

  it("a batch with nothing to take is acked whole without a store call", async () => {
    const { repo, ran, sink } = setup(mine);
    expect(await sink.deliverBatch([typed("a", "other"), typed("b", "x")])).toEqual(["ack", "ack"]);
    expect(ran).toEqual([]);
    expect(repo.claimed).toEqual([]);
  });

  it("a throwing accept nacks that message (reported), nothing after it runs", async () => {
    const { ran, errors, sink } = setup((m) => {
      if (m.uuid === "c") throw new Error("predicate bug");
      return true;
    });
    expect(await sink.deliverBatch([typed("a", "t"), typed("b", "t"), typed("c", "t"), typed("d", "t")])).toEqual([
      "ack",
      "ack",
      "nack",
    ]);
    expect(ran).toEqual(["a", "b"]);
    expect(errors.map((e) => e.error.message)).toEqual(["accept() of handler h threw: predicate bug"]);
    expect(await sink.deliver(typed("c", "t"))).toBe("nack");
  });

  it("accept sees the Router's context (handler, topic) and rejects a non-function at registration", () => {
    const seen: Array<string | undefined> = [];
    const router = new Router();
    router.addHandler({
      name: "h",
      topic: "t",
      subscriber: new MemoryPubSub(),
      handler: async () => undefined,
      accept: (m) => (seen.push(m.context.handler), true),
    });
    void router.sink("h").deliver(newMessage("u", ""));
    expect(seen).toEqual(["h"]);
    expect(() =>
      router.addHandler({
        name: "h2",
        topic: "t",
        subscriber: new MemoryPubSub(),
        handler: async () => undefined,
        accept: true as unknown as () => boolean,
      }),
    ).toThrow(RangeError);
  });
});
