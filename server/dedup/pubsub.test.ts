import { describe, expect, it } from "vitest";
import { newMessage, type Message, type Outcome } from "./message";
import { MemoryPubSub, sequentialSink, type MessageSink } from "./pubsub";

function recordingSink(decide: (m: Message, seen: number) => Outcome): { sink: MessageSink; log: string[] } {
  const log: string[] = [];
  const counts = new Map<string, number>();
  const one = async (m: Message) => {
    const n = (counts.get(m.uuid) ?? 0) + 1;
    counts.set(m.uuid, n);
    log.push(m.uuid);
    return decide(m, n);
  };
  return {
    log,
    sink: sequentialSink(one),
  };
}

describe("MemoryPubSub", () => {
  it("delivers in publish order and redelivers a nacked message before the later ones", async () => {
    for (const batchSize of [1, 3]) {
      const ps = new MemoryPubSub({ nackResendDelayMs: 1, batchSize });
      const { sink, log } = recordingSink((m, n) => (m.uuid === "b" && n < 3 ? "nack" : "ack"));
      const ctl = new AbortController();
      await ps.subscribe("t", sink, ctl.signal);
      await ps.publish("t", ...["a", "b", "c"].map((u) => newMessage(u, "")));
      await ps.idle();
      expect(log).toEqual(["a", "b", "b", "b", "c"]);
      ctl.abort();
    }
  });

  it("replays retained messages to a late subscriber (persistent) and fans out to every subscription", async () => {
    const ps = new MemoryPubSub();
    await ps.publish("t", newMessage("early", ""));
    const a = recordingSink(() => "ack");
    const b = recordingSink(() => "ack");
    const ctl = new AbortController();
    await ps.subscribe("t", a.sink, ctl.signal);
    await ps.subscribe("t", b.sink, ctl.signal);
    await ps.publish("t", newMessage("late", ""));
    await ps.idle();
    expect(a.log).toEqual(["early", "late"]);
    expect(b.log).toEqual(["early", "late"]);
    ctl.abort();
  });

  it("drops messages with no subscriber when not persistent (gochannel default)", async () => {
    const ps = new MemoryPubSub({ persistent: false });
    await ps.publish("t", newMessage("lost", ""));
    const a = recordingSink(() => "ack");
    const ctl = new AbortController();
    const sub = await ps.subscribe("t", a.sink, ctl.signal);
    await ps.idle();
    expect(a.log).toEqual([]);
    ctl.abort();
    await sub.closed;
  });

  it("fails a publish when beforePublish rejects, and validates options", async () => {
    const ps = new MemoryPubSub({ beforePublish: () => Promise.reject(new Error("down")) });
    await expect(ps.publish("t", newMessage("x", ""))).rejects.toThrow("down");
    expect(ps.messages("t")).toHaveLength(0);
    expect(() => new MemoryPubSub({ batchSize: 0 })).toThrow(/batchSize/);
  });
});
