import { describe, expect, it } from "vitest";
import { deduplicator } from "../deduplicator/deduplicator";
import { duplicator, DEFAULT_DUPLICATOR_OPTIONS } from "./duplicator";
import { MemoryRepository } from "../repository/memory-repository";
import { newMessage, type Handler } from "../message";

describe("duplicator(): a CI tool that checks a handler's own idempotency", () => {
  it("hands each message to the next handler twice and returns every copy's produced messages", async () => {
    const seen: string[] = [];
    const h = duplicator()(async (m) => {
      seen.push(m.uuid);
      return [newMessage(`out-${seen.length}`, "")];
    });
    const out = await h(newMessage("u1", ""));
    expect(seen).toEqual(["u1", "u1"]);
    expect(out?.map((m) => m.uuid)).toEqual(["out-1", "out-2"]);
    expect(DEFAULT_DUPLICATOR_OPTIONS.copies).toBe(2);
  });

  it("catches a handler that is not idempotent, and passes one that is (what a user's CI test asserts)", async () => {
    const pushesOf = async (handler: (sent: Map<string, number>) => Handler) => {
      const sent = new Map<string, number>();
      await duplicator()(handler(sent))(newMessage("evt-1", ""));
      return sent.get("evt-1");
    };
    const naive =
      (sent: Map<string, number>): Handler =>
      async (m) =>
        void sent.set(m.uuid, (sent.get(m.uuid) ?? 0) + 1);
    const idempotent =
      (sent: Map<string, number>): Handler =>
      async (m) =>
        void (sent.has(m.uuid) || sent.set(m.uuid, 1));
    expect(await pushesOf(naive)).toBe(2);
    expect(await pushesOf(idempotent)).toBe(1);
  });

  it("stops at the first failing copy with its error", async () => {
    let calls = 0;
    const h = duplicator({ copies: 3 })(async () => {
      if (++calls === 2) throw new Error("second copy failed");
    });
    await expect(h(newMessage("u", ""))).rejects.toThrow("second copy failed");
    expect(calls).toBe(2);
  });

  it("outside the Deduplicator it tests the Deduplicator instead: the copy is swallowed", async () => {
    let runs = 0;
    const h = duplicator()(
      deduplicator({ repository: new MemoryRepository(), service: "svc" })(async () => void runs++),
    );
    const m = newMessage("u", "");
    m.context.handler = "h";
    await h(m);
    expect(runs).toBe(1);
  });

  it("validates copies with a RangeError naming it", () => {
    expect(() => duplicator({ copies: 0 })).toThrow(/copies/);
    expect(() => duplicator({ copies: 1.5 })).toThrow(RangeError);
  });
});
