import { afterEach, describe, expect, it, vi } from "vitest";
import { newMessage, type Handler, type Message, type Middleware } from "../message";
import { MemoryPubSub } from "../pubsub";
import { correlationId } from "../middleware/correlation-id";
import { NonRetryableError } from "../errors";
import { CORRELATION_ID_KEY } from "../../../names/dedup";
import { Router, type RouterErrorEvent } from "./router";

const tag =
  (name: string, log: string[]): Middleware =>
  (next) =>
  async (msg) => {
    log.push(`${name}>`);
    try {
      return await next(msg);
    } finally {
      log.push(`<${name}`);
    }
  };

function routerWith(
  handler: Handler,
  opts: { middleware?: Middleware[]; global?: Middleware[]; errors?: RouterErrorEvent[] } = {},
) {
  const ps = new MemoryPubSub();
  const router = new Router({ onError: (e) => opts.errors?.push(e) });
  if (opts.global) router.use(...opts.global);
  router.addHandler({
    name: "h",
    topic: "in",
    subscriber: ps,
    handler,
    publisher: ps,
    publishTopic: "out",
    middleware: opts.middleware,
  });
  return { ps, router, sink: router.sink("h") };
}

afterEach(() => vi.useRealTimers());

describe("Router", () => {
  it("runs middleware first-added-outermost, router-level outside handler-level", async () => {
    const log: string[] = [];
    const { sink } = routerWith(async () => void log.push("handler"), {
      global: [tag("g1", log), tag("g2", log)],
      middleware: [tag("h1", log)],
    });
    expect(await sink.deliver(newMessage("u1", "x"))).toBe("ack");
    expect(log).toEqual(["g1>", "g2>", "h1>", "handler", "<h1", "<g2", "<g1"]);
  });

  it("turns throws, sync throws from middleware and non-Error rejections into a nack reported to onError", async () => {
    const errors: RouterErrorEvent[] = [];
    const onUnhandled = vi.fn();
    process.on("unhandledRejection", onUnhandled);
    try {
      const a = routerWith(() => Promise.reject("plain string"), { errors });
      expect(await a.sink.deliver(newMessage("u1", "x"))).toBe("nack");
      const syncThrow: Middleware = () => () => {
        throw new Error("sync");
      };
      const b = routerWith(async () => undefined, { middleware: [syncThrow], errors });
      expect(await b.sink.deliver(newMessage("u2", "x"))).toBe("nack");
      await new Promise((r) => setTimeout(r, 10));
      expect(onUnhandled).not.toHaveBeenCalled();
      expect(errors.map((e) => [e.uuid, e.error.message])).toEqual([
        ["u1", "non-Error thrown: plain string"],
        ["u2", "sync"],
      ]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("fills the delivery context and publishes produced messages to publishTopic", async () => {
    let seen: Message | undefined;
    const { ps, sink } = routerWith(async (m) => {
      seen = m;
      return [newMessage("child", "y")];
    });
    expect(await sink.deliver(newMessage("u1", "x"))).toBe("ack");
    expect(seen?.context).toMatchObject({ handler: "h", topic: "in", subscriber: "memory" });
    expect(ps.messages("out").map((m) => m.uuid)).toEqual(["child"]);
    // A transport that hands the same object in again gets a fresh per-delivery context.
    const again = newMessage("u2", "x");
    again.context = { topic: "in", partition: 3, offset: "42", attempt: 5 };
    await sink.deliver(again);
    expect(seen?.context).toMatchObject({ partition: 3, offset: "42" });
    expect(seen?.context.attempt).toBeUndefined();
  });

  it("nacks when publishing produced messages fails", async () => {
    const ps = new MemoryPubSub({ beforePublish: () => Promise.reject(new Error("broker down")) });
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "h",
      topic: "in",
      subscriber: ps,
      handler: async () => [newMessage("c", "")],
      publisher: ps,
      publishTopic: "out",
    });
    expect(await router.sink("h").deliver(newMessage("u", ""))).toBe("nack");
  });

  it("publishes produced messages inside the stack: a middleware sees them after they were sent, and they carry the correlation id", async () => {
    const { ps, sink } = routerWith(
      async () => [newMessage("c", ""), newMessage("d", "", { metadata: { [CORRELATION_ID_KEY]: "own" } })],
      {
        middleware: [
          correlationId(),
          (next) => async (msg) => {
            const out = await next(msg);
            sentBefore = ps.messages("out").length;
            return out;
          },
        ],
      },
    );
    let sentBefore = -1;
    expect(await sink.deliver(newMessage("u", "", { metadata: { [CORRELATION_ID_KEY]: "req-1" } }))).toBe("ack");
    expect(sentBefore).toBe(2);
    expect(ps.messages("out").map((m) => m.metadata[CORRELATION_ID_KEY])).toEqual(["req-1", "own"]);
  });

  it("a handler that returns messages without a publisher is not retried: its error is non-retryable", async () => {
    const ps = new MemoryPubSub();
    const errors: RouterErrorEvent[] = [];
    const router = new Router({ onError: (e) => errors.push(e) });
    router.addHandler({ name: "h", topic: "in", subscriber: ps, handler: async () => [newMessage("c", "")] });
    expect(await router.sink("h").deliver(newMessage("u", ""))).toBe("nack");
    expect(errors[0]?.error).toBeInstanceOf(NonRetryableError);
  });

  it("deliverBatch stops at the first nack, prepares once and discards the messages that never ran", async () => {
    const ran: string[] = [];
    const prepared: string[][] = [];
    const discarded: string[][] = [];
    const hooked: Middleware = Object.assign((next: Handler) => next, {
      prepareBatch: async (msgs: readonly Message[]) => {
        prepared.push(msgs.map((m) => m.uuid));
        return { discard: async (notRun: readonly Message[]) => void discarded.push(notRun.map((m) => m.uuid)) };
      },
    });
    const { sink } = routerWith(
      async (m) => {
        ran.push(m.uuid);
        if (m.uuid === "b") throw new Error("fail b");
      },
      { middleware: [hooked] },
    );
    const out = await sink.deliverBatch(["a", "b", "c", "d"].map((u) => newMessage(u, "")));
    expect(out).toEqual(["ack", "nack"]);
    expect(ran).toEqual(["a", "b"]);
    expect(prepared).toEqual([["a", "b", "c", "d"]]);
    expect(discarded).toEqual([["c", "d"]]);
  });

  it("run() consumes until close(), which waits for the in-flight handler", async () => {
    const ps = new MemoryPubSub();
    const router = new Router();
    let finished = false;
    router.addHandler({
      name: "slow",
      topic: "in",
      subscriber: ps,
      handler: async () => {
        await new Promise((r) => setTimeout(r, 50));
        finished = true;
      },
    });
    const running = router.run();
    await router.running;
    await ps.publish("in", newMessage("u", ""));
    await new Promise((r) => setTimeout(r, 5));
    await router.close();
    expect(finished).toBe(true);
    await running;
  });

  it("rejects a handler with a publisher but no publishTopic, and duplicate names", () => {
    const ps = new MemoryPubSub();
    const r = new Router();
    expect(() =>
      r.addHandler({ name: "h", topic: "t", subscriber: ps, handler: async () => undefined, publisher: ps }),
    ).toThrow(/publishTopic/);
    r.addHandler({ name: "h", topic: "t", subscriber: ps, handler: async () => undefined });
    expect(() => r.addHandler({ name: "h", topic: "t", subscriber: ps, handler: async () => undefined })).toThrow(
      /duplicate/,
    );
  });
});
