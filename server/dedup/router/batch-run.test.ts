import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { InProgressError } from "../errors";
import { MemoryRepository } from "../repository/memory-repository";
import { namedMiddleware, newMessage, type Handler, type Message, type Middleware } from "../message";
import { METRIC_NAMES } from "../../../names/dedup";
import { MemoryPubSub } from "../pubsub";
import { Router } from "./router";
import { defaultStack } from "../stack";
import { retry } from "../middleware/retry";

/** A middleware that logs what it sees; with `batchForm`, it also has a batch form that logs each batch. */
function probe(log: string[], batchForm: boolean): Middleware {
  return namedMiddleware(
    "probe",
    (next: Handler) => async (m: Message) => {
      log.push(`msg ${m.uuid}`);
      return next(m);
    },
    batchForm
      ? {
          batch: (_next, nextBatch) => (msgs, stop) => (
            log.push(`batch ${msgs.map((m) => m.uuid).join(",")}`),
            nextBatch(msgs, stop)
          ),
        }
      : undefined,
  );
}

async function processed(registry: Registry): Promise<Record<string, number>> {
  const m = await registry.getSingleMetric(METRIC_NAMES.processed)!.get();
  return Object.fromEntries(m.values.filter((v) => v.value > 0).map((v) => [String(v.labels.result), v.value]));
}

/** A Router over the default stack (in-memory store), the handler failing as `fails(uuid, attempt)` says. */
function setup(
  fails: (uuid: string, attempt: number) => Error | null,
  extra: { outermost?: Middleware[]; maxElapsedMs?: number } = {},
) {
  const dlq = new MemoryPubSub();
  const repo = new MemoryRepository();
  const registry = new Registry();
  const runs: string[] = [];
  const errors: string[] = [];
  const attempts = new Map<string, number>();
  const router = new Router({ onError: (e) => void errors.push(`${e.uuid}: ${e.error.message}`) });
  router.addHandler({
    name: "h",
    topic: "in",
    subscriber: new MemoryPubSub(),
    handler: async (m) => {
      const n = (attempts.get(m.uuid) ?? 0) + 1;
      attempts.set(m.uuid, n);
      runs.push(`${m.uuid}#${n}`);
      const e = fails(m.uuid, n);
      if (e) throw e;
    },
    middleware: defaultStack({
      dlqPublisher: dlq,
      dlqTopic: "in.dlq",
      dedup: { repository: repo, service: "svc", registry },
      retry: { maxRetries: 2, initialIntervalMs: 1, maxIntervalMs: 2, maxElapsedMs: extra.maxElapsedMs ?? 0 },
      outermost: extra.outermost,
    }),
  });
  return { router, sink: router.sink("h"), dlq, repo, registry, runs, errors };
}

const batch = (...ids: string[]) => ids.map((u) => newMessage(u, `{"id":"${u}"}`));

describe("a Router batch through the stack's batch form", () => {
  it("runs each layer once per batch when every middleware has a batch form, and message by message when one has none", async () => {
    const log: string[] = [];
    const withForm = setup(() => null, { outermost: [probe(log, true)] });
    expect(await withForm.sink.deliverBatch(batch("a", "b", "c"))).toEqual(["ack", "ack", "ack"]);
    expect(log).toEqual(["batch a,b,c"]);
    expect(withForm.runs).toEqual(["a#1", "b#1", "c#1"]);

    log.length = 0;
    const without = setup(() => null, { outermost: [probe(log, false)] });
    expect(await without.sink.deliverBatch(batch("a", "b", "c"))).toEqual(["ack", "ack", "ack"]);
    expect(log).toEqual(["msg a", "msg b", "msg c"]);
    expect(without.runs).toEqual(["a#1", "b#1", "c#1"]);
  });

  it("retries a failed message before the next one runs, and counts one success per message", async () => {
    const s = setup((u, n) => (u === "b" && n < 3 ? new Error("transient") : null));
    expect(await s.sink.deliverBatch(batch("a", "b", "c"))).toEqual(["ack", "ack", "ack"]);
    expect(s.runs).toEqual(["a#1", "b#1", "b#2", "b#3", "c#1"]);
    await s.sink.flush!();
    expect(await processed(s.registry)).toEqual({ success: 3 });
    // Every key done: a redelivery of the whole batch runs nothing.
    expect(await s.sink.deliverBatch(batch("a", "b", "c"))).toEqual(["ack", "ack", "ack"]);
    expect(s.runs).toHaveLength(5);
  });

  it("sends a message that fails every retry to the DLQ before the next one runs, and goes on", async () => {
    const s = setup((u) => (u === "b" ? new Error("always") : null));
    const order: string[] = [];
    const publish = s.dlq.publish.bind(s.dlq);
    s.dlq.publish = async (topic, ...msgs) => {
      order.push(`dlq ${msgs.map((m) => m.uuid).join(",")} after ${s.runs.join(" ")}`);
      return publish(topic, ...msgs);
    };
    expect(await s.sink.deliverBatch(batch("a", "b", "c"))).toEqual(["ack", "ack", "ack"]);
    expect(order).toEqual(["dlq b after a#1 b#1 b#2 b#3"]);
    expect(s.runs).toEqual(["a#1", "b#1", "b#2", "b#3", "c#1"]);
    expect(s.dlq.messages("in.dlq").map((m) => m.uuid)).toEqual(["b"]);
    await s.sink.flush!();
    expect(await processed(s.registry)).toEqual({ success: 2, error: 1 });
  });

  it("stops at a nack: the later messages do not run, their keys are free for the redelivery, the error is reported once", async () => {
    // InProgressError is not poisoned by the default stack: after its retries the message is nacked.
    const s = setup((u) => (u === "b" ? new InProgressError("k") : null));
    expect(await s.sink.deliverBatch(batch("a", "b", "c"))).toEqual(["ack", "nack"]);
    expect(s.runs).toEqual(["a#1", "b#1", "b#2", "b#3"]);
    expect(s.errors).toHaveLength(1);
    expect(s.errors[0]).toMatch(/^b: /);
    await s.sink.flush!();
    expect(s.repo.get("svc:dedup:h:c")).toBeNull();
    expect(await s.sink.deliverBatch(batch("c"))).toEqual(["ack"]);
    expect(s.runs.at(-1)).toBe("c#1");
  });

  it("with retry's maxElapsedMs (which needs each message's own start) the batch runs message by message, same outcomes", async () => {
    const log: string[] = [];
    const s = setup((u, n) => (u === "b" && n < 2 ? new Error("transient") : null), {
      outermost: [probe(log, true)],
      maxElapsedMs: 60_000,
    });
    expect(retry({ maxElapsedMs: 1 }).batch).toBeUndefined();
    expect(await s.sink.deliverBatch(batch("a", "b", "c"))).toEqual(["ack", "ack", "ack"]);
    expect(log).toEqual(["msg a", "msg b", "msg c"]);
    expect(s.runs).toEqual(["a#1", "b#1", "b#2", "c#1"]);
  });
});
