import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryRepository } from "../repository/memory-repository";
import { newMessage, type Handler } from "../message";
import { MemoryPubSub } from "../pubsub";
import { retry } from "./retry";
import { oneHandlerRouter } from "@/server/testing/one-handler-router";
import { defaultStack, describeStack } from "../stack";
import { DEFAULT_TIMEOUT_OPTIONS, HandlerTimeoutError, timeout } from "./timeout";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const never = () => new Promise<never>(() => undefined);

describe("timeout(ms)", () => {
  it("fails an attempt that outlives timeoutMs with a retryable HandlerTimeoutError, and aborts the handler's signal", async () => {
    let seen: AbortSignal | undefined;
    const h = timeout(1000)(async (m) => {
      seen = m.signal;
      return never();
    });
    const msg = newMessage("u1", "{}");
    msg.context.handler = "slow";
    const p = h(msg);
    const failed = expect(p).rejects.toBeInstanceOf(HandlerTimeoutError);
    await vi.advanceTimersByTimeAsync(999);
    expect(seen!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await failed;
    await p.catch((e: HandlerTimeoutError) => {
      expect(e.retryable).toBe(true);
      expect(e.timeoutMs).toBe(1000);
      expect(e.message).toMatch(/handler slow .*timeoutMs 1000/);
    });
    expect(seen!.aborted).toBe(true);
    expect(seen!.reason).toBeInstanceOf(HandlerTimeoutError);
  });

  it("passes a fast attempt's result and error through untouched, and leaves no timer behind", async () => {
    const ok = timeout(1000)(async () => [newMessage("out", "x")]);
    expect((await ok(newMessage("u", "")))?.map((m) => m.uuid)).toEqual(["out"]);
    await expect(timeout(1000)(async () => Promise.reject(new Error("boom")))(newMessage("u", ""))).rejects.toThrow(
      "boom",
    );
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the handler sees the transport's abort too, and writes to metadata and context reach the outer message", async () => {
    const ctl = new AbortController();
    const msg = newMessage("u", "", { signal: ctl.signal });
    let signal: AbortSignal | undefined;
    await timeout(1000)(async (m) => {
      signal = m.signal;
      m.metadata["k"] = "v";
      m.context.attempt = 7;
    })(msg);
    ctl.abort(new Error("rebalance"));
    expect(signal!.aborted).toBe(true);
    expect(msg.metadata.k).toBe("v");
    expect(msg.context.attempt).toBe(7);
  });

  it("does not cancel a handler that ignores the signal: it runs on after its attempt failed, and Retry starts the next one meanwhile", async () => {
    let running = 0;
    let maxRunning = 0;
    let finished = 0;
    const handler: Handler = async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setTimeout(r, 1500)); // ignores msg.signal
      running--;
      finished++;
    };
    const h = retry({ maxRetries: 1, initialIntervalMs: 100, randomizationFactor: 0 })(timeout(1000)(handler));
    const p = h(newMessage("u", ""));
    const failed = expect(p).rejects.toBeInstanceOf(HandlerTimeoutError);
    await vi.advanceTimersByTimeAsync(5000);
    await failed;
    expect(finished).toBe(2); // both attempts' work completed anyway
    expect(maxRunning).toBe(2); // and overlapped
  });

  it("validates timeoutMs with a RangeError naming it; the default is half the default lease", () => {
    expect(() => timeout(0)).toThrow(RangeError);
    expect(() => timeout({ timeoutMs: Number.NaN })).toThrow(/timeoutMs/);
    expect(DEFAULT_TIMEOUT_OPTIONS.timeoutMs).toBe(30_000);
  });

  it("in defaultStack (timeoutMs option): sits inside the Deduplicator, so a timed-out attempt releases its key and the retry runs", async () => {
    const ps = new MemoryPubSub();
    const repo = new MemoryRepository();
    const stack = defaultStack({
      dlqPublisher: ps,
      dlqTopic: "dlq",
      dedup: { repository: repo, service: "svc" },
      timeoutMs: 1000,
      retry: { initialIntervalMs: 10, randomizationFactor: 0 },
    });
    expect(describeStack(stack).slice(-2)).toEqual(["deduplicator", "timeout"]);
    let calls = 0;
    const router = oneHandlerRouter({
      topic: "t",
      subscriber: ps,
      middleware: stack,
      handler: async (m) => {
        calls++;
        if (calls === 1) await new Promise<void>((r) => m.signal.addEventListener("abort", () => r())); // stops when told
      },
    });
    const outcome = router.sink("h").deliver(newMessage("u1", "{}"));
    await vi.advanceTimersByTimeAsync(2000);
    expect(await outcome).toBe("ack");
    expect(calls).toBe(2);
    expect(ps.messages("dlq")).toHaveLength(0);
    expect(repo.get("svc:dedup:h:u1")).toMatch(/^done/);
  });
});
