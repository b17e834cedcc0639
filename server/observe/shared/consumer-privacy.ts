/**
 * What `GET /api/consumers` tells about consumers that are not this service's. A shared topic is
 * read by other teams' services too; their members' host names, addresses and PIDs (kafkajs
 * clientIds and member ids carry `<hostname>-<pid>`) are theirs to publish, not this dashboard's.
 * So, unless `CONSUMER_DETAILS=all`, the members of a group whose id does not start with
 * `<SERVICE_NAME>.` (the demo's and the workers' groups are `<service>.<handler>`) are shown as
 * `member-1`, `member-2`… with no host; partitions, lag and rates stay.
 */
import { groupOwner } from "@/names/kafka";
import type { ConsumerGroupView, ConsumersResponse } from "@/lib/api/consumers";

/** Whether the group belongs to `service` (its consumers are named `<service>.<handler>`). */
export function ownGroup(groupId: string, service: string): boolean {
  return groupOwner(groupId)?.service === service;
}

/** `g` with every member's identity replaced by `member-<n>` (n by position) and no host. */
export function anonymiseGroup(g: ConsumerGroupView): ConsumerGroupView {
  const alias = new Map<string, string>();
  g.members.forEach((m, i) => alias.set(m.memberId, `member-${i + 1}`));
  const name = (memberId: string | null) =>
    memberId === null ? null : `${g.groupId}/${alias.get(memberId) ?? "member-?"}`;
  return {
    ...g,
    members: g.members.map((m) => ({
      ...m,
      memberId: name(m.memberId)!,
      clientId: name(m.memberId)!,
      replica: alias.get(m.memberId)!,
      host: "",
    })),
    partitions: g.partitions.map((p) => ({ ...p, memberId: name(p.memberId), clientId: name(p.memberId) })),
  };
}

/** The answer as a viewer may see it: other services' groups anonymised unless `details` is `all`. */
export function consumersForViewer(r: ConsumersResponse, service: string, details: "own" | "all"): ConsumersResponse {
  if (details === "all") return r;
  return { ...r, groups: r.groups.map((g) => (ownGroup(g.groupId, service) ? g : anonymiseGroup(g))) };
}
