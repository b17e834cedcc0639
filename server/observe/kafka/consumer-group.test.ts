import { AssignerProtocol } from "kafkajs";
import { describe, expect, it } from "vitest";
import { consumersResponseSchema } from "@/lib/api/consumers";
import {
  assembleGroupView,
  ConsumerGroupDescriber,
  decodeAssignment,
  type ConsumerAdmin,
  type GroupSnapshot,
} from "./consumer-group";
import { NotFoundError, UpstreamUnavailableError } from "../core/errors";

const assignment = (a: Record<string, number[]>) =>
  AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: a, userData: Buffer.alloc(0) });

const SIX = [0, 1, 2, 3, 4, 5].map((p) => ({ partition: p, low: 0, high: 100 }));

describe("decodeAssignment", () => {
  it("reads the topic's partitions from kafkajs' member assignment, sorted", () => {
    expect(decodeAssignment(assignment({ "demo.events": [4, 1], other: [0] }), "demo.events")).toEqual([1, 4]);
    expect(decodeAssignment(assignment({ other: [0] }), "demo.events")).toEqual([]);
  });
  it("treats an empty (rebalancing) or unreadable assignment as none", () => {
    expect(decodeAssignment(Buffer.alloc(0), "t")).toEqual([]);
    expect(decodeAssignment(Buffer.from([1, 2, 3]), "t")).toEqual([]);
    expect(decodeAssignment(undefined, "t")).toEqual([]);
  });
});

describe("assembleGroupView", () => {
  const group = (members: GroupSnapshot["members"], committed: Array<[number, number | null]>): GroupSnapshot => ({
    groupId: "g",
    state: "Stable",
    protocol: "RoundRobinAssigner",
    members,
    committed: new Map(committed),
  });

  it("maps partitions to members, computes lag (never-committed = whole retained log) and flags gaps and overlaps", () => {
    const g = group(
      [
        { memberId: "m-b", clientId: "worker-2", host: "127.0.0.1", partitions: [3, 4] },
        { memberId: "m-a", clientId: "worker-1", host: "127.0.0.1", partitions: [0, 1, 2, 4] },
      ],
      [
        [0, 100],
        [1, 90],
        [2, null],
        [3, 50],
        [4, 100],
      ],
    );
    const offsets = SIX.map((o) => (o.partition === 2 ? { ...o, low: 40 } : o));
    const v = assembleGroupView(offsets, g, { at: 10_000, committed: g.committed }, null);
    expect(v.partitions.map((p) => [p.partition, p.clientId, p.lag])).toEqual([
      [0, "worker-1", 0],
      [1, "worker-1", 10],
      [2, "worker-1", 60],
      [3, "worker-2", 50],
      [4, "worker-2", 0],
      [5, null, 100],
    ]);
    expect(v.members.map((m) => [m.clientId, m.partitions, m.lag])).toEqual([
      ["worker-1", [0, 1, 2, 4], 70],
      ["worker-2", [3, 4], 50],
    ]);
    expect(v.totalLag).toBe(220);
    expect(v.unassigned).toEqual([5]);
    expect(v.overlapping).toEqual([4]);
    expect(v.rateWindowSeconds).toBeNull();
    expect(v.members.every((m) => m.processedPerSecond === null)).toBe(true);
  });

  it("derives per-partition and per-replica rates from committed progress over the window", () => {
    const members = [
      { memberId: "a", clientId: "w1", host: "h", partitions: [0, 1, 2] },
      { memberId: "b", clientId: "w2", host: "h", partitions: [3, 4, 5] },
    ];
    const prev = new Map<number, number | null>([0, 1, 2, 3, 4, 5].map((p) => [p, 10]));
    const now = new Map<number, number | null>([
      [0, 30],
      [1, 30],
      [2, 10],
      [3, 15],
      [4, null],
      [5, 5], // went backwards (offsets reset): no rate
    ]);
    const v = assembleGroupView(
      SIX,
      group(members, [...now]),
      { at: 12_000, committed: now },
      { at: 10_000, committed: prev },
    );
    expect(v.rateWindowSeconds).toBe(2);
    expect(v.partitions.map((p) => p.processedPerSecond)).toEqual([10, 10, 0, 2.5, null, null]);
    expect(v.members.map((m) => [m.clientId, m.processedPerSecond])).toEqual([
      ["w1", 20],
      ["w2", 2.5],
    ]);
  });
});

/** A fake admin: one topic of six partitions and the groups given. */
function fakeAdmin(state: {
  groups: Array<{
    groupId: string;
    state?: string;
    members: Array<{ memberId: string; clientId: string; assignment: Record<string, number[]> }>;
  }>;
  committed: Record<string, Record<number, number>>;
  fail?: Error;
  hang?: boolean;
}): ConsumerAdmin {
  const maybe = async <T>(v: T): Promise<T> => {
    if (state.hang) await new Promise(() => undefined);
    if (state.fail) throw state.fail;
    return v;
  };
  const admin = {
    listTopics: () => maybe(["demo.events", "other"]),
    fetchTopicOffsets: () =>
      maybe(
        SIX.map((o) => ({ partition: o.partition, offset: String(o.high), high: String(o.high), low: String(o.low) })),
      ),
    listGroups: () => maybe({ groups: state.groups.map((g) => ({ groupId: g.groupId, protocolType: "consumer" })) }),
    describeGroups: (ids: string[]) =>
      maybe({
        groups: ids.map((id) => {
          const g = state.groups.find((x) => x.groupId === id);
          return {
            groupId: id,
            state: g?.state ?? (g ? "Stable" : "Dead"),
            protocol: g ? "RoundRobinAssigner" : "",
            protocolType: "consumer",
            members: (g?.members ?? []).map((m) => ({
              memberId: m.memberId,
              clientId: m.clientId,
              clientHost: "/127.0.0.1",
              memberAssignment: assignment(m.assignment),
              memberMetadata: Buffer.alloc(0),
            })),
          };
        }),
      }),
    fetchOffsets: ({ groupId }: { groupId: string }) =>
      maybe([
        {
          topic: "demo.events",
          partitions: SIX.map((o) => ({
            partition: o.partition,
            offset: String(state.committed[groupId]?.[o.partition] ?? -1),
            metadata: null,
          })),
        },
      ]),
  };
  return admin as unknown as ConsumerAdmin;
}

describe("ConsumerGroupDescriber", () => {
  const twoWorkers = {
    groups: [
      {
        groupId: "demo",
        members: [
          { memberId: "m1", clientId: "worker-1", assignment: { "demo.events": [0, 1, 2] } },
          { memberId: "m2", clientId: "worker-2", assignment: { "demo.events": [3, 4, 5] } },
        ],
      },
      { groupId: "elsewhere", members: [{ memberId: "x", clientId: "x", assignment: { other: [0] } }] },
    ],
    committed: { demo: { 0: 100, 1: 100, 2: 100, 3: 40, 4: 40, 5: 40 } },
  };

  it("lists the groups assigned the topic and stopped groups that committed on it, with a valid response body", async () => {
    const state: Parameters<typeof fakeAdmin>[0] = structuredClone(twoWorkers);
    state.groups.push(
      { groupId: "stopped", state: "Empty", members: [] },
      { groupId: "stopped-elsewhere", state: "Empty", members: [] },
    );
    state.committed.stopped = { 0: 60 };
    const d = new ConsumerGroupDescriber(fakeAdmin(state));
    const r = await d.describe({ topic: "demo.events" });
    expect(consumersResponseSchema.parse(r)).toEqual(r);
    expect(r.partitionCount).toBe(6);
    expect(r.groups.map((g) => g.groupId)).toEqual(["demo", "stopped"]);
    const stopped = r.groups[1]!;
    expect([stopped.state, stopped.members, stopped.unassigned, stopped.totalLag]).toEqual([
      "Empty",
      [],
      [0, 1, 2, 3, 4, 5],
      40 + 5 * 100,
    ]);
    expect(r.groups[0]!.members.map((m) => [m.clientId, m.host, m.partitions, m.lag])).toEqual([
      ["worker-1", "127.0.0.1", [0, 1, 2], 0],
      ["worker-2", "127.0.0.1", [3, 4, 5], 180],
    ]);
  });

  it("never lets stopped groups crowd out running ones when maxGroups is reached", async () => {
    const state: Parameters<typeof fakeAdmin>[0] = structuredClone(twoWorkers);
    state.groups.unshift({ groupId: "a-stopped", state: "Empty", members: [] });
    state.committed["a-stopped"] = { 0: 1 };
    const r = await new ConsumerGroupDescriber(fakeAdmin(state), { maxGroups: 1 }).describe({ topic: "demo.events" });
    expect(r.groups.map((g) => g.groupId)).toEqual(["demo"]);
  });

  it("measures rates only over windows of at least minRateWindowMs, always ending at the current call", async () => {
    let t = 0;
    const state = structuredClone(twoWorkers);
    const d = new ConsumerGroupDescriber(fakeAdmin(state), { minRateWindowMs: 1000 }, () => t);
    const rate = async () =>
      (await d.describe({ topic: "demo.events", group: "demo" })).groups[0]!.members.map((m) => m.processedPerSecond);
    expect(await rate()).toEqual([null, null]);
    t = 400;
    state.committed.demo[3] = 60;
    expect(await rate(), "a 0.4 s window is too short").toEqual([null, null]);
    t = 2000;
    state.committed.demo[3] = 90;
    expect(await rate(), "50 messages on partition 3 in 2 s").toEqual([0, 25]);
    t = 2500;
    expect(
      await rate(),
      "0.5 s later: still measured from t=0 (2.5 s), as the window since t=2 s is too short",
    ).toEqual([0, 20]);
    t = 3200;
    state.committed.demo[0] = 112;
    expect(await rate(), "from t=2 s: 12 messages on partition 0 in 1.2 s, none on 3").toEqual([10, 0]);
  });

  it("answers 404 for an unknown topic or an unknown group, 503 when Kafka fails or hangs", async () => {
    const d = new ConsumerGroupDescriber(fakeAdmin(twoWorkers));
    await expect(d.describe({ topic: "nope" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(d.describe({ topic: "demo.events", group: "ghost" })).rejects.toThrow(
      /ghost has no members and no committed offsets/,
    );
    const down = new ConsumerGroupDescriber(
      fakeAdmin({ ...twoWorkers, fail: new Error("Connection error: ECONNREFUSED") }),
    );
    await expect(down.describe({ topic: "demo.events" })).rejects.toBeInstanceOf(UpstreamUnavailableError);
    const hung = new ConsumerGroupDescriber(fakeAdmin({ ...twoWorkers, hang: true }), { requestTimeoutMs: 100 });
    await expect(hung.describe({ topic: "demo.events" })).rejects.toThrow(
      /kafka: listTopics failed: .*longer than 100 ms/,
    );
  });

  it("rejects options out of range, naming them", () => {
    expect(() => new ConsumerGroupDescriber(fakeAdmin(twoWorkers), { minRateWindowMs: 10 })).toThrow(/minRateWindowMs/);
    expect(() => new ConsumerGroupDescriber(fakeAdmin(twoWorkers), { maxGroups: 0 })).toThrow(/maxGroups/);
  });

  it("members(): one DescribeGroups for the groups asked, each member's replica id and partitions of the group's topic", async () => {
    const state: Parameters<typeof fakeAdmin>[0] = structuredClone(twoWorkers);
    state.groups[0]!.members = [
      { memberId: "m1", clientId: "demo/host-a-101", assignment: { "demo.events": [0, 1, 2, 3] } },
      { memberId: "m2", clientId: "demo/host-b-202", assignment: { "demo.events": [4, 5] } },
    ];
    const d = new ConsumerGroupDescriber(fakeAdmin(state));
    expect(
      await d.members([
        { groupId: "demo", topic: "demo.events" },
        { groupId: "ghost", topic: "demo.events" },
      ]),
    ).toEqual([
      {
        groupId: "demo",
        state: "Stable",
        members: [
          { clientId: "demo/host-a-101", host: "127.0.0.1", partitions: 4 },
          { clientId: "demo/host-b-202", host: "127.0.0.1", partitions: 2 },
        ],
      },
      { groupId: "ghost", state: "Dead", members: [] },
    ]);
    const r = await d.describe({ topic: "demo.events", group: "demo" });
    expect(r.groups[0]!.members.map((m) => m.replica)).toEqual(["host-a-101", "host-b-202"]);
    const down = new ConsumerGroupDescriber(fakeAdmin({ ...twoWorkers, fail: new Error("ECONNREFUSED") }));
    await expect(down.members([{ groupId: "demo", topic: "demo.events" }])).rejects.toBeInstanceOf(
      UpstreamUnavailableError,
    );
  });
});
