import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deduplicator, deduplicator } from "./deduplicator";
import type { DeduplicatorOptions, Marking } from "./deduplicator-options";
import { DedupStoreError, InProgressError } from "../errors";
import { failClosed, failOpen } from "../repository/failure-mode";
import { FaultyRepository } from "../repository/faulty-repository";
import { MemoryRepository } from "../repository/memory-repository";
import { newMessage, type Handler, type Message } from "../message";
import { METRIC_NAMES, REASON_POISONED_KEY } from "../../../names/dedup";
import { MemoryPubSub } from "../pubsub";
import { type DedupRepository } from "../repository/repository";
import { DONE_VALUE, PROCESSING_PREFIX } from "../repository/stored-value";

/** A `done` value without a position, with the payload's fingerprint. */
const DONE_WITH_FINGERPRINT = /^done#[A-Za-z0-9_-]{7}$/;
import { observationCount } from "@/server/testing/histogram";
import { oneHandlerRouter } from "@/server/testing/one-handler-router";
import { defaultStack } from "../stack";
import { registryTotal } from "@/server/testing/counter-total";

const KEY = (uuid: string) => `svc:dedup:h:${uuid}`;

/** A Router with the default stack (or a custom one) on one handler "h" of topic "in". */
function harness(
  handler: Handler,
  opts: {
    marking?: Marking;
    repo?: DedupRepository;
    dedup?: Partial<DeduplicatorOptions>;
    stack?: "default" | "dedup-only";
  } = {},
) {
  const registry = new Registry();
  const ps = new MemoryPubSub({ nackResendDelayMs: 0 });
  const repo = opts.repo ?? new MemoryRepository();
  const dedup: DeduplicatorOptions = {
    repository: repo,
    service: "svc",
    marking: opts.marking ?? "lease",
    registry,
    ...opts.dedup,
  };
  const router = oneHandlerRouter({
    topic: "in",
    subscriber: ps,
    handler,
    middleware:
      opts.stack === "dedup-only"
        ? [deduplicator(dedup)]
        : defaultStack({
            dlqPublisher: ps,
            dlqTopic: "in.dlq",
            dedup,
            retry: { initialIntervalMs: 100, randomizationFactor: 0 },
          }),
  });
  return { registry, ps, repo, router, sink: router.sink("h") };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("Deduplicator — the spec's tests", () => {
  it("fake repository: the second call with one UUID is a duplicate", async () => {
    const calls: string[] = [];
    const { sink, registry } = harness(async (m) => void calls.push(m.uuid), { stack: "dedup-only" });
    expect(await sink.deliver(newMessage("01A", "x"))).toBe("ack");
    expect(await sink.deliver(newMessage("01A", "x"))).toBe("ack");
    expect(calls).toEqual(["01A"]);
    expect(
      await registryTotal(registry, METRIC_NAMES.deduplicated, { service: "svc", topic: "in", handler: "h" }),
    ).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "success" })).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "deduplicated" })).toBe(1);
  });

  it("in-memory pub/sub: three publishes with one UUID → the handler runs once", async () => {
    vi.useRealTimers();
    const calls: string[] = [];
    const { ps, router, registry } = harness(async (m) => void calls.push(m.uuid));
    const running = router.run();
    await router.running;
    // Three copies of one message (same UUID, same payload: another payload would be a conflict).
    for (let i = 0; i < 3; i++) await ps.publish("in", newMessage("01SAME", "copy"));
    await ps.idle();
    await router.close();
    await running;
    expect(calls).toEqual(["01SAME"]);
    expect(await registryTotal(registry, METRIC_NAMES.processed)).toBe(3);
    expect(await registryTotal(registry, METRIC_NAMES.deduplicated)).toBe(2);
  });
});

describe("Deduplicator — retries lose nothing (spec §10)", () => {
  it("handler fails twice then succeeds → three calls, one success, ack, key done", async () => {
    let calls = 0;
    const { sink, repo, registry } = harness(async () => {
      if (++calls <= 2) throw new Error("transient");
    });
    const p = sink.deliver(newMessage("u1", ""));
    await vi.advanceTimersByTimeAsync(1000);
    expect(await p).toBe("ack");
    expect(calls).toBe(3);
    expect((repo as MemoryRepository).get(KEY("u1"))).toMatch(DONE_WITH_FINGERPRINT);
    // Per delivery, not per attempt: one success, no error.
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "success" })).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "error" })).toBe(0);
    expect(await registryTotal(registry, METRIC_NAMES.released)).toBe(2);
  });

  it("always fails → DLQ entry with reason_poisoned, key released, one error per delivery; the DLQ replay is processed", async () => {
    const { sink, ps, repo, registry } = harness(async () => {
      throw new Error("db down");
    });
    const p = sink.deliver(newMessage("u2", ""));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await p).toBe("ack");
    const dlq = ps.messages("in.dlq");
    expect(dlq.map((m) => [m.uuid, m.metadata[REASON_POISONED_KEY]])).toEqual([["u2", "db down"]]);
    expect((repo as MemoryRepository).get(KEY("u2"))).toBeNull();
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "error" })).toBe(1);

    const replayed: string[] = [];
    const replay = harness(async (m) => void replayed.push(m.uuid), { repo });
    expect(await replay.sink.deliver(dlq[0]!)).toBe("ack");
    expect(replayed).toEqual(["u2"]);
  });

  it('"naive" marking (the documented demonstration): fails once → the retry is swallowed, acked without any success', async () => {
    let calls = 0;
    let successes = 0;
    const { sink, ps, registry } = harness(
      async () => {
        if (++calls === 1) throw new Error("transient");
        successes++;
      },
      { marking: "naive" },
    );
    const p = sink.deliver(newMessage("u3", ""));
    await vi.advanceTimersByTimeAsync(1000);
    expect(await p).toBe("ack");
    expect(calls).toBe(1);
    expect(successes).toBe(0); // lost: acked, never processed …
    expect(ps.messages("in.dlq")).toHaveLength(0); // … and not in the DLQ either
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "deduplicated" })).toBe(1);
  });

  it('"release" marking: fails once → the retry runs the handler', async () => {
    let calls = 0;
    const { sink, repo } = harness(
      async () => {
        if (++calls === 1) throw new Error("transient");
      },
      { marking: "release" },
    );
    const p = sink.deliver(newMessage("u4", ""));
    await vi.advanceTimersByTimeAsync(1000);
    expect(await p).toBe("ack");
    expect(calls).toBe(2);
    expect((repo as MemoryRepository).get(KEY("u4"))).toMatch(/^claimed:/);
  });
});

describe("Deduplicator — leases", () => {
  it("a concurrent claim gets InProgressError; after the owner's success it is swallowed", async () => {
    const repo = new MemoryRepository();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    const a = deduplicator({ repository: repo, service: "svc" })(async () => {
      runs++;
      await gate;
    });
    const b = deduplicator({ repository: repo, service: "svc" })(async () => void runs++);
    const msgA = newMessage("u5", "");
    msgA.context.handler = "h";
    const msgB = newMessage("u5", "");
    msgB.context.handler = "h";
    const pa = a(msgA);
    await vi.advanceTimersByTimeAsync(0);
    await expect(b(msgB)).rejects.toBeInstanceOf(InProgressError);
    release();
    await pa;
    await expect(b(msgB)).resolves.toBeUndefined();
    expect(runs).toBe(1);
  });

  it("an owner that crashed (claimed, never finished) → the message is processed after leaseMs", async () => {
    const repo = new MemoryRepository();
    await repo.claim(KEY("u6"), `${PROCESSING_PREFIX}crashed-owner`, 5_000);
    const calls: string[] = [];
    const { sink } = harness(async (m) => void calls.push(m.uuid), {
      repo,
      stack: "dedup-only",
      dedup: { leaseMs: 5_000 },
    });
    expect(await sink.deliver(newMessage("u6", ""))).toBe("nack");
    await vi.advanceTimersByTimeAsync(5_001);
    expect(await sink.deliver(newMessage("u6", ""))).toBe("ack");
    expect(calls).toEqual(["u6"]);
    expect(repo.get(KEY("u6"))).toMatch(DONE_WITH_FINGERPRINT);
  });

  it("in the default stack an in-progress conflict is nacked for redelivery, not poisoned", async () => {
    const repo = new MemoryRepository();
    await repo.claim(KEY("u7"), `${PROCESSING_PREFIX}other`, 60_000);
    const { sink, ps } = harness(async () => undefined, { repo });
    const p = sink.deliver(newMessage("u7", ""));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await p).toBe("nack");
    expect(ps.messages("in.dlq")).toHaveLength(0);
  });

  it("a success after the lease was taken over counts deduplication_lease_lost_total", async () => {
    const repo = new MemoryRepository();
    const { sink, registry } = harness(
      async () => {
        await new Promise((r) => setTimeout(r, 2_000));
      },
      { repo, stack: "dedup-only", dedup: { leaseMs: 1_000 } },
    );
    const p = sink.deliver(newMessage("u8", ""));
    await vi.advanceTimersByTimeAsync(1_500);
    await repo.claim(KEY("u8"), `${PROCESSING_PREFIX}thief`, 60_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await p).toBe("ack");
    expect(await registryTotal(registry, METRIC_NAMES.leaseLost)).toBe(1);
  });
});

describe("Deduplicator — store failures", () => {
  const refused = () => new FaultyRepository(new MemoryRepository(), { errorRate: 1 });

  it("failOpen: a store error lets the message through and counts redis_conn", async () => {
    const calls: string[] = [];
    const { sink, registry } = harness(async (m) => void calls.push(m.uuid), {
      repo: failOpen(refused()),
      stack: "dedup-only",
    });
    expect(await sink.deliver(newMessage("u9", ""))).toBe("ack");
    expect(calls).toEqual(["u9"]);
    expect(await registryTotal(registry, METRIC_NAMES.errors, { service: "svc", reason: "redis_conn" })).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "success" })).toBe(1);
  });

  it("a failed check is the handler's last check and last error at once (no check after it); the next good check is after it", async () => {
    const repo = refused();
    const { sink, registry } = harness(async () => undefined, { repo: failOpen(repo), stack: "dedup-only" });
    const moment = async (name: string) =>
      (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.handler === "h")?.value;
    expect(await sink.deliver(newMessage("g1", ""))).toBe("ack");
    const failedAt = (await moment(METRIC_NAMES.lastError))!;
    expect(failedAt).toBeGreaterThan(Date.now() / 1000 - 5);
    expect((await moment(METRIC_NAMES.lastCheck))!).toBeLessThanOrEqual(failedAt);
    repo.set({ errorRate: 0 });
    await vi.advanceTimersByTimeAsync(10); // the clocks are fake here
    expect(await sink.deliver(newMessage("g2", ""))).toBe("ack");
    expect((await moment(METRIC_NAMES.lastCheck))!).toBeGreaterThan(failedAt);
    expect(await moment(METRIC_NAMES.lastError)).toBe(failedAt);
  });

  it("a claim sent before a failure whose reply is read after it is no check after that failure (the fault is not called over)", async () => {
    const memory = new MemoryRepository();
    let answer: (() => void) | undefined;
    // g3's claim is answered only when the test says; g4's is refused meanwhile (the store just went down).
    const repo: DedupRepository = Object.assign(Object.create(memory) as MemoryRepository, {
      claim: (key: string, value: string, ttlMs: number) =>
        key.endsWith("g4")
          ? Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))
          : new Promise<string | null>((r) => (answer = () => r(memory.claim(key, value, ttlMs)))),
    });
    const { sink, registry } = harness(async () => undefined, { repo: failOpen(repo), stack: "dedup-only" });
    const moment = async (name: string) =>
      (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.handler === "h")?.value;
    const slow = sink.deliver(newMessage("g3", ""));
    await vi.advanceTimersByTimeAsync(10);
    expect(await sink.deliver(newMessage("g4", ""))).toBe("ack");
    await vi.advanceTimersByTimeAsync(10);
    answer!();
    expect(await slow).toBe("ack");
    const failedAt = (await moment(METRIC_NAMES.lastError))!;
    expect((await moment(METRIC_NAMES.lastCheck))!).toBeLessThanOrEqual(failedAt);
  });

  /** An in-memory store whose next `failures` done marks are refused. */
  class FlakyMarks extends MemoryRepository {
    marks = 0;
    constructor(public failures: number) {
      super();
    }
    override markDone(key: string, value: string, ttlMs: number): Promise<string | null> {
      this.marks++;
      if (this.failures-- > 0)
        return Promise.reject(Object.assign(new Error("connection reset"), { code: "ECONNRESET" }));
      return super.markDone(key, value, ttlMs);
    }
  }

  it("a done mark refused once is sent again: the key ends done, a copy is swallowed, one redis_conn error is counted", async () => {
    const repo = new FlakyMarks(1);
    let runs = 0;
    const { sink, registry } = harness(async () => void runs++, { repo, stack: "dedup-only" });
    const first = sink.deliver(newMessage("m1", "x"));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await first).toBe("ack");
    expect(repo.marks).toBe(2);
    expect(repo.get(KEY("m1"))).toMatch(DONE_WITH_FINGERPRINT);
    expect(await registryTotal(registry, METRIC_NAMES.errors, { reason: "redis_conn" })).toBe(1);
    expect(await sink.deliver(newMessage("m1", "x"))).toBe("ack");
    expect(runs).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "success" })).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "deduplicated" })).toBe(1);
  });

  it("a done mark refused on every attempt still ends the delivery as a success (the handler is not run again now): three attempts, three errors, the key keeps its lease", async () => {
    const repo = new FlakyMarks(Infinity);
    const logged: string[] = [];
    const registry = new Registry();
    let runs = 0;
    // Called directly, without a Router.
    const run = deduplicator({ repository: repo, service: "svc", registry, logger: (line) => void logged.push(line) })(
      async () => void runs++,
    );
    const msg = newMessage("m2", "x");
    msg.context = { handler: "h", topic: "in" };
    const delivery = run(msg);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(delivery).resolves.toBeUndefined();
    expect(runs).toBe(1);
    expect(repo.marks).toBe(3);
    expect(repo.get(KEY("m2"))).toMatch(new RegExp(`^${PROCESSING_PREFIX}`));
    expect(await registryTotal(registry, METRIC_NAMES.errors, { reason: "redis_conn" })).toBe(3);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "success" })).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "error" })).toBe(0);
    expect(logged.some((l) => l.includes("could not mark svc:dedup:h:m2 done"))).toBe(true);
  });

  it("called without a Router, a failed attempt counts one error result per delivery; a retry that succeeds leaves that one", async () => {
    const registry = new Registry();
    let attempts = 0;
    const run = deduplicator({ repository: new MemoryRepository(), service: "svc", registry })(async () => {
      if (++attempts === 1) throw new Error("first attempt fails");
    });
    const msg = newMessage("m3", "x");
    msg.context = { handler: "h", topic: "in" };
    await expect(run(msg)).rejects.toThrow("first attempt fails");
    await expect(run(msg)).resolves.toBeUndefined(); // the same delivery again (what Retry does)
    expect(attempts).toBe(2);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "error" })).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "success" })).toBe(1);
    expect(await registryTotal(registry, METRIC_NAMES.released, { handler: "h" })).toBe(1);
  });

  it("fail-open counts every run without a check in deduplication_unchecked_total by reason; fail-closed counts none", async () => {
    const ran: string[] = [];
    const open = harness(async (m) => void ran.push(m.uuid), { repo: failOpen(refused()), stack: "dedup-only" });
    const unchecked = (h: typeof open, reason: string) =>
      registryTotal(h.registry, METRIC_NAMES.unchecked, { service: "svc", handler: "h", reason });
    expect(await unchecked(open, "redis_conn")).toBe(0);
    for (const u of ["n1", "n2", "n3"]) expect(await open.sink.deliver(newMessage(u, ""))).toBe("ack");
    // A repeat is not caught while the store is down: the same UUID runs again, and counts again.
    expect(await open.sink.deliver(newMessage("n1", ""))).toBe("ack");
    expect(ran).toEqual(["n1", "n2", "n3", "n1"]);
    expect(await unchecked(open, "redis_conn")).toBe(4);
    expect(await unchecked(open, "redis_timeout")).toBe(0);
    const badKey = harness(async () => undefined, { stack: "dedup-only", dedup: { keyFactory: () => "" } });
    expect(await badKey.sink.deliver(newMessage("n4", ""))).toBe("ack");
    expect(await unchecked(badKey, "marshal")).toBe(1);
    const closed = harness(async () => undefined, { repo: failClosed(refused()), stack: "dedup-only" });
    expect(await closed.sink.deliver(newMessage("n5", ""))).toBe("nack");
    expect(await registryTotal(closed.registry, METRIC_NAMES.errors, { reason: "redis_conn" })).toBe(1);
    expect(await registryTotal(closed.registry, METRIC_NAMES.unchecked)).toBe(0);
  });

  it("failClosed: a store call slower than timeoutMs → redis_timeout, retried, then the DLQ", async () => {
    const slow = new FaultyRepository(new MemoryRepository(), { latencyMs: 1_000 });
    const calls: string[] = [];
    const { sink, ps, registry } = harness(async (m) => void calls.push(m.uuid), {
      repo: failClosed(slow),
      dedup: { timeoutMs: 50 },
    });
    const p = sink.deliver(newMessage("u10", ""));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await p).toBe("ack");
    expect(calls).toEqual([]);
    expect(ps.messages("in.dlq")[0]?.metadata[REASON_POISONED_KEY]).toMatch(/redis_timeout/);
    expect(await registryTotal(registry, METRIC_NAMES.errors, { reason: "redis_timeout" })).toBe(5);
    expect(await registryTotal(registry, METRIC_NAMES.processed, { result: "error" })).toBe(1);
  });

  it('failureMode is an option: unset = open (spec §4), "closed" on a bare repository poisons, a contradiction with failOpen/failClosed is refused', async () => {
    const ran: string[] = [];
    const open = harness(async (m) => void ran.push(m.uuid), { repo: refused(), stack: "dedup-only" });
    expect(await open.sink.deliver(newMessage("o1", ""))).toBe("ack");
    expect(ran).toEqual(["o1"]);
    const closed = harness(async (m) => void ran.push(m.uuid), {
      repo: refused(),
      dedup: { failureMode: "closed" },
      stack: "dedup-only",
    });
    expect(await closed.sink.deliver(newMessage("c1", ""))).toBe("nack");
    expect(ran).toEqual(["o1"]);
    expect(await registryTotal(closed.registry, METRIC_NAMES.errors, { reason: "redis_conn" })).toBe(1);
    expect(new Deduplicator({ repository: failClosed(refused()), failureMode: "closed" }).options.failureMode).toBe(
      "closed",
    );
    expect(new Deduplicator({ repository: failOpen(refused()) }).options.failureMode).toBe("open");
    expect(() => new Deduplicator({ repository: failClosed(refused()), failureMode: "open" })).toThrow(
      /failureMode must be "closed" like its repository/,
    );
  });

  it("a throwing key factory counts marshal: fail-open processes, fail-closed poisons at once (not retryable)", async () => {
    const badKey = { keyFactory: () => JSON.parse("{not json") as string };
    const open = harness(async () => undefined, { stack: "dedup-only", dedup: badKey });
    expect(await open.sink.deliver(newMessage("u11", ""))).toBe("ack");
    expect(await registryTotal(open.registry, METRIC_NAMES.errors, { reason: "marshal" })).toBe(1);
    let calls = 0;
    const closed = harness(async () => void calls++, { repo: failClosed(new MemoryRepository()), dedup: badKey });
    expect(await closed.sink.deliver(newMessage("u12", ""))).toBe("ack");
    expect(calls).toBe(0);
    expect(closed.ps.messages("in.dlq")).toHaveLength(1);
    expect(await registryTotal(closed.registry, METRIC_NAMES.errors, { reason: "marshal" })).toBe(1);
  });

  it("DedupStoreError carries the reason", () => {
    expect(new DedupStoreError("marshal", "x").retryable).toBe(false);
    expect(new DedupStoreError("redis_conn", "x").retryable).toBe(true);
  });
});

describe("Deduplicator — batch pre-claim", () => {
  async function seeded() {
    const mem = new MemoryRepository();
    await mem.claim(KEY("done"), DONE_VALUE, 60_000);
    await mem.claim(KEY("busy"), `${PROCESSING_PREFIX}other`, 60_000);
    return { mem, repo: new FaultyRepository(mem) };
  }

  it("claims a whole batch in one round trip and gives the same outcomes as one-by-one delivery", async () => {
    const ids = ["new1", "done", "busy", "new2"];
    const batch = await seeded();
    const ranB: string[] = [];
    const b = harness(async (m) => void ranB.push(m.uuid), { repo: batch.repo, stack: "dedup-only" });
    const outB = await b.sink.deliverBatch(ids.map((u) => newMessage(u, "")));
    expect(batch.repo.calls).toMatchObject({ claimBatch: 1, claim: 0 });

    const single = await seeded();
    const ranS: string[] = [];
    const s = harness(async (m) => void ranS.push(m.uuid), { repo: single.repo, stack: "dedup-only" });
    const outS = [];
    for (const u of ids) {
      const o = await s.sink.deliver(newMessage(u, ""));
      outS.push(o);
      if (o === "nack") break;
    }
    expect(outB).toEqual(["ack", "ack", "nack"]);
    expect(outB).toEqual(outS);
    expect(ranB).toEqual(ranS);
    // new2 never ran: its pre-claim was released, so its redelivery is not blocked for a lease.
    expect(batch.mem.get(KEY("new2"))).toBeNull();
    expect(batch.mem.get(KEY("new1"))).toMatch(DONE_WITH_FINGERPRINT);
  });

  it("a batch's done marks are sent in one round trip as the batch resolves, and sink.flush() waits for them (the transport's commit)", async () => {
    const mem = new MemoryRepository();
    const repo = new FaultyRepository(mem, { latencyMs: 50 });
    const { sink } = harness(async () => undefined, { repo, stack: "dedup-only" });
    const ids = Array.from({ length: 10 }, (_, i) => `m${i}`);
    let resolved = false;
    const p = sink.deliverBatch(ids.map((u) => newMessage(u, ""))).then((o) => {
      resolved = true;
      return o;
    });
    await vi.advanceTimersByTimeAsync(60); // the pipelined claim, then ten no-op handlers
    // The batch resolved — the transport may fetch and claim the next one — while the marks are in flight.
    expect(resolved).toBe(true);
    expect(await p).toEqual(ids.map(() => "ack"));
    expect(ids.map((u) => mem.get(KEY(u))?.startsWith(PROCESSING_PREFIX))).toEqual(ids.map(() => true));
    let flushed = false;
    const f = sink.flush!().then(() => (flushed = true));
    await vi.advanceTimersByTimeAsync(20);
    expect(flushed).toBe(false); // a commit now would wait: the marks have not landed
    await vi.advanceTimersByTimeAsync(40); // all ten marks at once — not 10 × 50 ms
    await f;
    expect(ids.map((u) => mem.get(KEY(u)))).toEqual(ids.map(() => expect.stringMatching(DONE_WITH_FINGERPRINT)));
    expect(repo.calls).toMatchObject({
      claimBatch: 1,
      claim: 0,
      markDoneBatch: 1,
      markDone: 0,
      compareAndSetBatch: 0,
      compareAndSet: 0,
    });
    // Nothing pending: flush resolves at once.
    await sink.flush!();
  });

  it("a batch counts one result per delivery, the same as one-by-one delivery: success, deduplicated, error (nack and poisoned)", async () => {
    vi.useRealTimers();
    const fail = new Set(["bad"]);
    const counts = async (registry: Registry) => ({
      success: await registryTotal(registry, METRIC_NAMES.processed, { result: "success" }),
      deduplicated: await registryTotal(registry, METRIC_NAMES.processed, { result: "deduplicated" }),
      error: await registryTotal(registry, METRIC_NAMES.processed, { result: "error" }),
    });
    const handler: Handler = async (m) => {
      if (fail.has(m.uuid)) throw new Error("boom");
    };
    // dedup-only: "bad" nacks and ends the batch ("after" never runs, so it counts nothing).
    const ids = ["a", "a", "bad", "after"];
    const b = harness(handler, { stack: "dedup-only" });
    expect(await b.sink.deliverBatch(ids.map((u) => newMessage(u, "")))).toEqual(["ack", "ack", "nack"]);
    const s = harness(handler, { stack: "dedup-only" });
    for (const u of ids.slice(0, 3)) await s.sink.deliver(newMessage(u, ""));
    expect(await counts(b.registry)).toEqual({ success: 1, deduplicated: 1, error: 1 });
    expect(await counts(b.registry)).toEqual(await counts(s.registry));
    // default stack (retries 100-800 ms): "bad" is retried, then poisoned (ack) — still one error result.
    const p = harness(handler, { dedup: {} });
    expect(await p.sink.deliverBatch(["x", "bad", "y"].map((u) => newMessage(u, "")))).toEqual(["ack", "ack", "ack"]);
    expect(await counts(p.registry)).toEqual({ success: 2, deduplicated: 0, error: 1 });
  }, 20_000);

  it("one UUID twice in a batch: the second copy is swallowed, not in-progress", async () => {
    const runs: string[] = [];
    const { sink } = harness(async (m) => void runs.push(m.uuid), { stack: "dedup-only" });
    expect(await sink.deliverBatch([newMessage("x", ""), newMessage("x", ""), newMessage("y", "")])).toEqual([
      "ack",
      "ack",
      "ack",
    ]);
    expect(runs).toEqual(["x", "y"]);
  });

  it("re-checks a pre-claim older than half the lease before running the handler", async () => {
    const mem = new MemoryRepository();
    const repo = new FaultyRepository(mem);
    const runs: string[] = [];
    const { sink } = harness(
      async (m) => {
        runs.push(m.uuid);
        if (m.uuid === "slow") await new Promise((r) => setTimeout(r, 6_000));
      },
      { repo, stack: "dedup-only", dedup: { leaseMs: 10_000 } },
    );
    const p = sink.deliverBatch([newMessage("slow", ""), newMessage("next", "")]);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(await p).toEqual(["ack", "ack"]);
    expect(repo.calls.claim).toBe(1); // "next" re-checked once (still ours) …
    expect(repo.calls.compareAndSet).toBe(1); // … its lease renewed …
    expect([repo.calls.markDoneBatch, repo.calls.markDone, repo.calls.compareAndSetBatch]).toEqual([1, 0, 0]); // … and both marked done in one call
    expect(mem.get(KEY("next"))).toMatch(DONE_WITH_FINGERPRINT);
    expect(runs).toEqual(["slow", "next"]);
  });

  it("a batch claim that landed but timed out is recognised as ours by the per-message re-check", async () => {
    const mem = new MemoryRepository();
    // The pipeline reaches Redis, but the reply comes too late (timeout): the claims did land.
    const lateReply: DedupRepository = {
      kind: "memory",
      claim: (k, v, t) => mem.claim(k, v, t),
      claimBatch: async (reqs) => {
        await mem.claimBatch(reqs);
        await new Promise((r) => setTimeout(r, 1_000));
        return [];
      },
      compareAndSet: (k, e, v, t) => mem.compareAndSet(k, e, v, t),
      compareAndDelete: (k, e) => mem.compareAndDelete(k, e),
    };
    const registry = new Registry();
    const d = new Deduplicator({ repository: lateReply, service: "svc", timeoutMs: 100, registry });
    const m = newMessage("z", "");
    m.context.handler = "h";
    const prep = d.prepareBatch([m]);
    await vi.advanceTimersByTimeAsync(100);
    const preparation = await prep;
    expect(mem.get(KEY("z"))).toMatch(/^processing:/);
    const runs: Message[] = [];
    await d.middleware(async (x) => void runs.push(x))(m); // not InProgressError: the lease is ours
    expect(runs).toHaveLength(1);
    await preparation.settle?.(); // what the Router does before deliverBatch resolves
    expect(mem.get(KEY("z"))).toMatch(DONE_WITH_FINGERPRINT);
    expect(await registryTotal(registry, METRIC_NAMES.errors, { reason: "redis_timeout" })).toBe(1);
  });
});

describe("Deduplicator — options", () => {
  it("validates options with a RangeError naming the option", () => {
    const repository = new MemoryRepository();
    expect(() => deduplicator({ repository, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => deduplicator({ repository, ttlMs: 1000, leaseMs: 2000 })).toThrow(/leaseMs/);
    expect(() => deduplicator({ repository, marking: "eager" as Marking })).toThrow(/marking/);
    expect(() => deduplicator({ repository, service: "a:b" })).toThrow(/service/);
  });

  it("keys are <service>:dedup:<handler>:<key> and the default lease covers the default retry window", () => {
    const d = new Deduplicator({ repository: new MemoryRepository(), service: "notification" });
    const m = newMessage("01JD8X3Q", "");
    m.context.handler = "on-review-created";
    expect(d.keyOf(m)).toBe("notification:dedup:on-review-created:01JD8X3Q");
    expect(d.options.leaseMs).toBe(60_000);
  });
});

describe("check-duration samples", () => {
  it("a check that waited for the store's reconnect is no latency sample; one on a steady connection is", async () => {
    const registry = new Registry();
    let lost = false;
    const repo = Object.assign(new MemoryRepository(), { connectionLostSince: () => lost });
    const run = deduplicator({ repository: repo, service: "svc", registry })(async () => undefined);
    const samples = () => observationCount(registry, METRIC_NAMES.checkDuration);
    const deliver = (uuid: string) =>
      run(Object.assign(newMessage(uuid, "p"), { context: { topic: "in", handler: "h" } }));
    await deliver("steady");
    expect(await samples()).toBe(1);
    lost = true;
    await deliver("after-reconnect");
    expect(await samples()).toBe(1);
  });
});
