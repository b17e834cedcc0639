import { describe, expect, it } from "vitest";
import type { ConsumersResponse } from "@/lib/api/consumers";
import { consumersForViewer, ownGroup } from "./consumer-privacy";

const member = (group: string, who: string, partitions: number[]) => ({
  memberId: `${group}/${who}-5f1c`,
  clientId: `${group}/${who}`,
  replica: who,
  host: "10.0.0.7",
  partitions,
  lag: 0,
  processedPerSecond: null,
});
const group = (id: string) => ({
  groupId: id,
  state: "Stable",
  protocol: "RoundRobinAssigner",
  members: [member(id, "box-a-4242", [0]), member(id, "box-b-77", [1])],
  partitions: [0, 1].map((p) => ({
    partition: p,
    memberId: `${id}/${p === 0 ? "box-a-4242" : "box-b-77"}-5f1c`,
    clientId: `${id}/x`,
    committedOffset: 1,
    startOffset: 0,
    endOffset: 2,
    lag: 1,
    processedPerSecond: null,
  })),
  totalLag: 2,
  unassigned: [],
  overlapping: [],
  rateWindowSeconds: null,
});
const answer: ConsumersResponse = {
  generatedAt: "2026-12-02T00:00:00.000Z",
  topic: "demo.events",
  partitionCount: 2,
  groups: [group("notification.on-x"), group("billing.on-x")],
};

describe("consumersForViewer", () => {
  it("keeps this service's groups as they are and shows other services' members without host names or PIDs", () => {
    const v = consumersForViewer(answer, "notification", "own");
    expect(v.groups[0]).toEqual(answer.groups[0]);
    const other = v.groups[1]!;
    expect(other.members.map((m) => [m.replica, m.host, m.clientId, m.memberId])).toEqual([
      ["member-1", "", "billing.on-x/member-1", "billing.on-x/member-1"],
      ["member-2", "", "billing.on-x/member-2", "billing.on-x/member-2"],
    ]);
    expect(other.partitions.map((p) => p.memberId)).toEqual(["billing.on-x/member-1", "billing.on-x/member-2"]);
    expect(JSON.stringify(other)).not.toMatch(/box-|4242|10\.0\.0\.7/);
    expect(consumersForViewer(answer, "notification", "all")).toBe(answer);
  });

  it("a group is this service's only by its `<service>.` prefix", () => {
    expect(ownGroup("notification.on-x", "notification")).toBe(true);
    expect(ownGroup("notification-evil.on-x", "notification")).toBe(false);
    expect(ownGroup("notificationx", "notification")).toBe(false);
  });
});
