import { describe, expect, it } from "vitest";
import { type Message, type Outcome, newMessage, payloadText, type MessageSink } from "@/server/dedup";
import { MemoryBroker } from "./memory-broker";

/** The embedded broker behaves like a Kafka consumer group where the workshop relies on it. */
const sink = (onMsg: (m: Message) => Outcome): MessageSink => ({
  deliver: async (m) => onMsg(m),
  deliverBatch: async (ms) => {
    const out: Outcome[] = [];
    for (const m of ms) {
      const o = onMsg(m);
      out.push(o);
      if (o === "nack") break;
    }
    return out;
  },
});
const until = async (cond: () => boolean) => {
  const end = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("MemoryBroker consumer groups", () => {
  it("splits partitions between members and keeps per-partition order through a nack", async () => {
    const b = new MemoryBroker();
    b.createTopic("t", 2);
    const pub = b.publisher();
    await pub.publish("t", ...Array.from({ length: 10 }, (_, i) => newMessage(`u${i}`, String(i))));
    const seen: Array<[number, string]> = [];
    let failed = false;
    const stop = new AbortController();
    const s1 = b.subscriber({ groupId: "g", replica: "a", chunkSize: 3, nackDelayMs: 1 });
    await s1.subscribe(
      "t",
      sink((m) => {
        if (payloadText(m) === "4" && !failed) {
          failed = true;
          return "nack";
        }
        seen.push([m.context.partition!, payloadText(m)]);
        return "ack";
      }),
      stop.signal,
    );
    await until(() => seen.length === 10);
    // Round-robin publishing: even numbers on partition 0, odd on 1; each partition in order, 4 once.
    expect(seen.filter(([p]) => p === 0).map(([, v]) => v)).toEqual(["0", "2", "4", "6", "8"]);
    expect(seen.filter(([p]) => p === 1).map(([, v]) => v)).toEqual(["1", "3", "5", "7", "9"]);
    const s2 = b.subscriber({ groupId: "g", replica: "b" });
    await s2.subscribe(
      "t",
      sink(() => "ack"),
      stop.signal,
    );
    expect([...(s1.assignment.get("t") ?? []), ...(s2.assignment.get("t") ?? [])].sort()).toEqual([0, 1]);
    expect(s1.assignment.get("t")).toHaveLength(1);
    stop.abort();
    await b.close();
  });

  it("a crash before commit leaves the batch to the next member; an interval commit re-reads the tail after a rebalance", async () => {
    const b = new MemoryBroker();
    b.createTopic("t", 1);
    await b.publisher().publish("t", ...Array.from({ length: 5 }, (_, i) => newMessage(`u${i}`, String(i))));
    const stop = new AbortController();
    const crashing = b.subscriber({ groupId: "g", replica: "crash", beforeCommit: () => "crash" });
    let crashed = 0;
    await crashing.subscribe(
      "t",
      sink(() => (crashed++, "ack")),
      stop.signal,
    );
    await until(() => crashing.crashed);
    expect(crashed).toBe(5);
    const reads: string[] = [];
    const next = b.subscriber({ groupId: "g", replica: "next", commitIntervalMs: 60_000 });
    await next.subscribe(
      "t",
      sink((m) => (reads.push(payloadText(m)), "ack")),
      stop.signal,
    );
    await until(() => reads.length === 5); // nothing was committed: all re-read
    const joiner = b.subscriber({ groupId: "g", replica: "joiner" });
    await joiner.subscribe(
      "t",
      sink((m) => (reads.push(payloadText(m)), "ack")),
      stop.signal,
    );
    await until(() => reads.length === 10); // the rebalance dropped the uncommitted progress: re-read again
    expect(reads).toEqual(["0", "1", "2", "3", "4", "0", "1", "2", "3", "4"]);
    stop.abort();
    await b.close();
  });

  it("unreadable records go to the DLQ once, uncounted by groups that do not claim them", async () => {
    const b = new MemoryBroker();
    b.createTopic("t", 1);
    b.createTopic("t.dlq", 1);
    b.produce("t", { headers: { "Event-Type": "x" }, value: Buffer.from("no uuid") });
    const stop = new AbortController();
    const counts = { a: 0, b: 0 };
    for (const g of ["a", "b"] as const) {
      const s = b.subscriber({
        groupId: g,
        dlq: { publisher: b.publisher(), topic: "t.dlq" },
        claimsUnreadable: () => g === "a",
        onUnreadable: () => counts[g]++,
      });
      await s.subscribe(
        "t",
        sink(() => "ack"),
        stop.signal,
      );
    }
    await until(() => b.records("t.dlq").length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(counts).toEqual({ a: 1, b: 0 });
    expect(b.records("t.dlq")[0]!.headers["reason_poisoned"]).toMatch(/^marshal: /);
    stop.abort();
    await b.close();
  });
});
