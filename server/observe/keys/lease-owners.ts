/**
 * Is a lease's owner alive? A lease value names its owner replica (`processing:<hostname>-<pid>/…`,
 * `claimOwnerOf`); the replicas alive now are those Prometheus scrapes for the service
 * (`dedup_consumer_info`, named query `consumer_instances`) and the members of its declared
 * handlers' consumer groups (Kafka DescribeGroups). A SIGKILLed consumer leaves both: Prometheus
 * marks its series stale at the failed scrape, the group drops it after its session timeout.
 * **Unknown is not dead**: when no source answers, or none sees any replica of the service (a
 * service this dashboard does not observe), every owner is unknown (`null`), never selected as dead.
 */
import { replicaOfClientId } from "@/server/transport/replica-id";
import type { ObserveContext } from "../core/ports";
import { getGroupMembers } from "../kafka/consumer-group";
import { declaredGroupId, declaredHandlers } from "../core/handler-registry";

/** The replica ids alive for `service` now; null when no source answered or none sees one of its replicas. */
export async function liveReplicas(ctx: Pick<ObserveContext, "metrics">, service: string): Promise<Set<string> | null> {
  const groups = declaredHandlers()
    .filter((d) => d.service === service && d.topic !== undefined)
    .map((d) => ({ groupId: declaredGroupId(d), topic: d.topic! }));
  const [scraped, members] = await Promise.all([
    ctx.metrics.instant("consumer_instances").catch(() => null),
    groups.length ? getGroupMembers(groups).catch(() => null) : Promise.resolve(null),
  ]);
  const live = new Set<string>();
  for (const s of scraped ?? [])
    if (s.labels.service === service && s.labels.replica && (s.value ?? 0) > 0) live.add(s.labels.replica);
  for (const g of members ?? []) for (const m of g.members) live.add(replicaOfClientId(m.clientId));
  return live.size > 0 ? live : null;
}

/**
 * Whether `owner` (a process's replica id, `<hostname>-<pid>`) is alive in `live`: one of its
 * replicas is (a further replica in a process adds `-<suffix>`). Null when either is unknown.
 */
export function ownerAlive(owner: string | null, live: ReadonlySet<string> | null): boolean | null {
  if (owner === null || live === null) return null;
  for (const r of live) if (r === owner || r.startsWith(`${owner}-`)) return true;
  return false;
}
