import { describe, expect, it } from "vitest";
import { createTopicsReady, waitForLeaders } from "./topics";

type Md = Awaited<ReturnType<Parameters<typeof waitForLeaders>[0]["fetchTopicMetadata"]>>;
const part = (partitionId: number, leader: number) => ({
  partitionErrorCode: 0,
  partitionId,
  leader,
  replicas: [1],
  isr: [1],
  offlineReplicas: [],
});
const protocolError = (type: string) =>
  Object.assign(
    new Error(type === "UNKNOWN_TOPIC_OR_PARTITION" ? "This server does not host this topic-partition" : type),
    { type, retriable: true },
  );

/** A fake admin answering each fetchTopicMetadata call with the next scripted answer (the last one repeats). */
function admin(answers: Array<Md | Error>) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    fetchTopicMetadata: async () => {
      const a = answers[Math.min(calls++, answers.length - 1)]!;
      if (a instanceof Error) throw a;
      return a;
    },
  };
}

describe("waitForLeaders (a topic created a moment ago on a loaded KRaft broker)", () => {
  it("polls through 'does not host this topic-partition' and leaderless partitions until every partition has a leader", async () => {
    const a = admin([
      protocolError("UNKNOWN_TOPIC_OR_PARTITION"),
      protocolError("UNKNOWN_TOPIC_OR_PARTITION"),
      { topics: [{ name: "t", partitions: [part(0, 1)] }] }, // 1 of 3 partitions known
      { topics: [{ name: "t", partitions: [part(0, 1), part(1, -1), part(2, 1)] }] }, // one without a leader
      { topics: [{ name: "t", partitions: [part(0, 1), part(1, 1), part(2, 1)] }] },
    ]);
    await waitForLeaders(a, [{ name: "t", partitions: 3 }], 2_000, 1);
    expect(a.calls).toBe(5);
  });

  it("throws after the bound, naming the topic still without a leader", async () => {
    const a = admin([{ topics: [{ name: "t", partitions: [part(0, -1)] }] }]);
    await expect(waitForLeaders(a, [{ name: "t", partitions: 1 }], 30, 5)).rejects.toThrow(
      /not ready after 30 ms \(no leader yet for t\)/,
    );
  });

  it("throws at once on an error that is not about a topic being created", async () => {
    const a = admin([
      Object.assign(new Error("Not authorized to access topics"), { type: "TOPIC_AUTHORIZATION_FAILED" }),
    ]);
    await expect(waitForLeaders(a, [{ name: "t", partitions: 1 }], 2_000, 1)).rejects.toThrow(/Not authorized/);
    expect(a.calls).toBe(1);
  });
});

describe("createTopicsReady", () => {
  it("tries the create again after a transient answer (its metadata refresh named a topic being deleted), then waits for the leaders", async () => {
    const creates: number[] = [];
    const leaders = admin([{ topics: [{ name: "t", partitions: [part(0, 1), part(1, 1)] }] }]);
    const a = {
      listTopics: async () => [] as string[],
      createTopics: async (req: { topics: Array<{ numPartitions?: number }> }) => {
        creates.push(req.topics[0]!.numPartitions!);
        if (creates.length === 1) throw protocolError("UNKNOWN_TOPIC_OR_PARTITION");
        return true;
      },
      fetchTopicMetadata: leaders.fetchTopicMetadata,
    };
    await createTopicsReady(a, [{ name: "t", partitions: 2 }], 2_000);
    expect(creates).toEqual([2, 2]);
    expect(leaders.calls).toBe(1);
  });
});
