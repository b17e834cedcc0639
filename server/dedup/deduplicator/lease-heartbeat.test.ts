import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deduplicator } from "./deduplicator";
import type { DeduplicatorOptions } from "./deduplicator-options";
import { InProgressError, LeaseLostError } from "../errors";
import { FaultyRepository } from "../repository/faulty-repository";
import { MemoryRepository } from "../repository/memory-repository";
import { newMessage, type Handler, type Message } from "../message";
import { METRIC_NAMES } from "../../../names/dedup";
import { isDoneValue } from "../repository/stored-value";
import { registryTotal } from "@/server/testing/counter-total";
import { oneHandlerRouter } from "@/server/testing/one-handler-router";
import { MemoryPubSub } from "../pubsub";

const LEASE_MS = 3_000;
const KEY = (uuid: string) => `svc:dedup:h:${uuid}`;

/** One consumer: a Deduplicator with the heartbeat (unless told otherwise) in front of `handler`. */
function consumer(
  repo: MemoryRepository | FaultyRepository,
  handler: Handler,
  opts: Partial<DeduplicatorOptions> = {},
) {
  const registry = new Registry();
  const run = deduplicator({
    repository: repo,
    service: "svc",
    leaseMs: LEASE_MS,
    heartbeat: true,
    registry,
    logger: () => undefined,
    ...opts,
  })(handler);
  const deliver = (uuid: string): Promise<void | Message[]> => {
    const m = newMessage(uuid, `{"n":1}`);
    m.context = { handler: "h", topic: "in" };
    return run(m);
  };
  const leaseLost = () => registryTotal(registry, METRIC_NAMES.leaseLost);
  return { deliver, leaseLost };
}

/** A handler that works `ms` (fake time) and ignores `msg.signal`, counting its runs. */
function slowHandler(ms: number) {
  const runs = { started: 0, finished: 0 };
  const handler: Handler = async () => {
    runs.started++;
    await new Promise((r) => setTimeout(r, ms));
    runs.finished++;
  };
  return { handler, runs };
}

describe("lease heartbeat", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps a handler that runs 5 × leaseMs the only owner: a second consumer's every try meets its lease, then its done", async () => {
    const repo = new MemoryRepository();
    const first = slowHandler(5 * LEASE_MS);
    const second = slowHandler(10);
    const a = consumer(repo, first.handler);
    const b = consumer(repo, second.handler);
    const running = a.deliver("u1");
    const tries: string[] = [];
    for (let t = 0; t < 5 * LEASE_MS - 500; t += 500) {
      await vi.advanceTimersByTimeAsync(500);
      tries.push(
        await b.deliver("u1").then(
          () => "ran-or-swallowed",
          (e: unknown) => (e instanceof InProgressError ? "in-progress" : String(e)),
        ),
      );
    }
    await vi.advanceTimersByTimeAsync(1_000);
    await running;
    expect(tries.length).toBe(29);
    expect(tries.every((t) => t === "in-progress")).toBe(true);
    expect(isDoneValue(repo.get(KEY("u1")) ?? "")).toBe(true);
    await b.deliver("u1"); // the copy after the success is swallowed
    expect(second.runs.started).toBe(0);
    expect(first.runs).toEqual({ started: 1, finished: 1 });
    expect(await a.leaseLost()).toBe(0);
  });

  it("without the heartbeat the same second consumer takes the key once leaseMs has passed (what the heartbeat prevents)", async () => {
    const repo = new MemoryRepository();
    const first = slowHandler(5 * LEASE_MS);
    const second = slowHandler(10);
    const a = consumer(repo, first.handler, { heartbeat: false });
    const b = consumer(repo, second.handler, { heartbeat: false });
    const running = a.deliver("u1");
    await vi.advanceTimersByTimeAsync(LEASE_MS + 100);
    const took = b.deliver("u1");
    await vi.advanceTimersByTimeAsync(5 * LEASE_MS);
    await Promise.all([running, took]);
    expect(second.runs.finished).toBe(1);
    expect(first.runs.finished).toBe(1);
  });

  it("a handler faster than leaseMs / 3 makes no store call beyond its claim and done mark", async () => {
    const repo = new FaultyRepository(new MemoryRepository());
    const fast = slowHandler(LEASE_MS / 3 - 50);
    const a = consumer(repo, fast.handler);
    for (let i = 0; i < 20; i++) {
      const p = a.deliver(`fast${i}`);
      await vi.advanceTimersByTimeAsync(LEASE_MS / 3 - 50);
      await p;
    }
    await vi.advanceTimersByTimeAsync(10 * LEASE_MS); // no timer left behind renews anything later
    expect(fast.runs.finished).toBe(20);
    expect(repo.calls).toMatchObject({ claim: 20, markDone: 20, extendLease: 0, compareAndSet: 0 });
  });

  it("renews a running handler's claim every leaseMs / 3 to leaseMs / 2, and stops when it ends", async () => {
    const repo = new FaultyRepository(new MemoryRepository());
    const slow = slowHandler(2 * LEASE_MS);
    const a = consumer(repo, slow.handler);
    const p = a.deliver("u2");
    await vi.advanceTimersByTimeAsync(2 * LEASE_MS);
    await p;
    // 2 × leaseMs between renewals of leaseMs / 3 … leaseMs / 2 apart: 4 to 6 of them.
    expect(repo.calls.extendLease).toBeGreaterThanOrEqual(4);
    expect(repo.calls.extendLease).toBeLessThanOrEqual(6);
    const after = repo.calls.extendLease;
    await vi.advanceTimersByTimeAsync(10 * LEASE_MS);
    expect(repo.calls.extendLease).toBe(after);
    expect(vi.getTimerCount()).toBe(0); // the ticker stops once no handler runs
  });

  it("a renewal that finds the key taken aborts msg.signal with LeaseLostError and counts one lost lease", async () => {
    const repo = new MemoryRepository();
    let seen: unknown;
    const a = consumer(repo, (msg) => {
      return new Promise((_, reject) => {
        msg.signal.addEventListener("abort", () => {
          seen = msg.signal.reason;
          reject(msg.signal.reason as Error);
        });
      });
    });
    const b = consumer(repo, async () => undefined);
    const running = a.deliver("u3").catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    // The first owner's claim is gone (as after a stall past its TTL) and a second consumer processes the message.
    repo.forget(KEY("u3"));
    await b.deliver("u3");
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    const err = await running;
    expect(err).toBeInstanceOf(LeaseLostError);
    expect(seen).toBe(err);
    expect((err as LeaseLostError).why).toBe("taken");
    expect(await a.leaseLost()).toBe(1);
    expect(isDoneValue(repo.get(KEY("u3")) ?? "")).toBe(true); // the second consumer's done stays
  });

  it("a handler that ignores the abort and succeeds late counts the lost lease once, not twice", async () => {
    const repo = new MemoryRepository();
    const first = slowHandler(LEASE_MS);
    const a = consumer(repo, first.handler);
    const running = a.deliver("u4");
    await vi.advanceTimersByTimeAsync(100);
    // The second consumer ran the message and marked it with the same done value (same delivery position).
    repo.forget(KEY("u4"));
    await consumer(repo, async () => undefined).deliver("u4");
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    await running;
    expect(first.runs.finished).toBe(1);
    expect(await a.leaseLost()).toBe(1);
  });

  it("a late success over another consumer's live lease counts the lost lease once: the renewal counted it, the done mark does not again", async () => {
    const repo = new MemoryRepository();
    const first = slowHandler(LEASE_MS);
    const a = consumer(repo, first.handler);
    const running = a.deliver("u7");
    await vi.advanceTimersByTimeAsync(100);
    repo.forget(KEY("u7"));
    expect(await repo.claim(KEY("u7"), "processing:other", 60_000)).toBeNull();
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    await running;
    expect(first.runs.finished).toBe(1);
    expect(await a.leaseLost()).toBe(1);
    expect(isDoneValue(repo.get(KEY("u7")) ?? "")).toBe(true); // the success is recorded whoever held the key
  });

  it("a renewal still on the way when the handler ends decides before the done mark: a takeover with the same done value is counted", async () => {
    const inner = new MemoryRepository();
    // Every store call takes 50 ms: the renewal at leaseMs / 3 is still on the way when the handler ends 10 ms later.
    const repo = new FaultyRepository(inner, { latencyMs: 50 });
    const first = slowHandler(LEASE_MS / 3 + 10);
    const a = consumer(repo, first.handler);
    const running = a.deliver("u8");
    await vi.advanceTimersByTimeAsync(100);
    // Meanwhile the claim was lost and another consumer ran the message: same delivery, same done value.
    inner.forget(KEY("u8"));
    await consumer(inner, async () => undefined).deliver("u8");
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    await running;
    expect(first.runs.finished).toBe(1);
    expect(await a.leaseLost()).toBe(1);
  });

  it("maxLeaseMs bounds a stuck handler: its signal aborts, the claim expires and a second consumer runs the message", async () => {
    const repo = new MemoryRepository();
    let reason: unknown;
    const a = consumer(
      repo,
      (msg) =>
        new Promise(() => {
          msg.signal.addEventListener("abort", () => (reason = msg.signal.reason));
        }),
      { maxLeaseMs: 2 * LEASE_MS },
    );
    const second = slowHandler(10);
    const b = consumer(repo, second.handler);
    void a.deliver("u5");
    await vi.advanceTimersByTimeAsync(2 * LEASE_MS - 100);
    await expect(b.deliver("u5")).rejects.toBeInstanceOf(InProgressError);
    expect(reason).toBeUndefined();
    await vi.advanceTimersByTimeAsync(200);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect((reason as LeaseLostError).why).toBe("max-lease");
    expect(repo.get(KEY("u5"))).toBeNull();
    const p = b.deliver("u5");
    await vi.advanceTimersByTimeAsync(20);
    await p;
    expect(second.runs.finished).toBe(1);
  });

  it("the handler's message is the delivery's: same fields, its metadata and context written through, the transport's abort on its signal", async () => {
    const transport = new AbortController();
    let seen: Message | undefined;
    const run = deduplicator({
      repository: new MemoryRepository(),
      service: "svc",
      leaseMs: LEASE_MS,
      heartbeat: true,
      logger: () => undefined,
    })(async (msg) => {
      seen = msg;
      msg.metadata.seen = "yes";
      msg.context.attempt = 7;
      transport.abort(new Error("rebalance"));
    });
    const m = newMessage("u6", "payload", { signal: transport.signal, metadata: { a: "1" } });
    m.context = { handler: "h", topic: "in", partition: 0, offset: "9" };
    await run(m);
    expect(seen!.uuid).toBe("u6");
    expect(seen!.payload).toBe(m.payload);
    expect({ ...seen }).toMatchObject({ uuid: "u6", metadata: { a: "1", seen: "yes" } });
    expect(m.metadata.seen).toBe("yes");
    expect(m.context.attempt).toBe(7);
    expect(seen!.signal.aborted).toBe(true);
    expect((seen!.signal.reason as Error).message).toBe("rebalance");
  });

  it("renews the claim of a message run from a Router batch too: its batch pre-claim outlives leaseMs while the handler runs", async () => {
    const repo = new MemoryRepository();
    const slow = slowHandler(3 * LEASE_MS);
    const router = oneHandlerRouter({
      topic: "in",
      subscriber: new MemoryPubSub(),
      handler: slow.handler,
      middleware: [deduplicator({ repository: repo, service: "svc", leaseMs: LEASE_MS, heartbeat: true })],
    });
    const batch = router.sink("h").deliverBatch([newMessage("b1", "{}"), newMessage("b2", "{}")]);
    await vi.advanceTimersByTimeAsync(2 * LEASE_MS);
    // b1 runs for 3 × leaseMs; at 2 × leaseMs its claim is still a live lease (a second consumer would meet it).
    expect(repo.get(KEY("b1"))).toMatch(/^processing:/);
    await vi.advanceTimersByTimeAsync(6 * LEASE_MS);
    expect(await batch).toEqual(["ack", "ack"]);
    expect(isDoneValue(repo.get(KEY("b1")) ?? "")).toBe(true);
    expect(slow.runs.finished).toBe(2);
  });

  it("rejects a maxLeaseMs shorter than leaseMs", () => {
    expect(() => consumer(new MemoryRepository(), async () => undefined, { maxLeaseMs: LEASE_MS - 1 })).toThrow(
      /maxLeaseMs must be a number of ms ≥ leaseMs/,
    );
  });
});
