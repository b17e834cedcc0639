/**
 * Does the dashboard see every replica? Compares the replicas Prometheus scrapes
 * (`dedup_consumer_info{service, replica}` and the `instance` it scraped them at; named query
 * `consumer_instances`, one fixed query for all services) with the members of the services'
 * consumer groups (Kafka DescribeGroups). A member Prometheus does not scrape consumes traffic no
 * figure on the dashboard counts: with 1 of 2 replicas scraped, the duplicates and rates show about
 * half of what happens, and nothing else would say so.
 */
import type { Unavailable } from "@/lib/api/common";
import type { ScrapeCoverage } from "@/lib/api/overview";
import { formatNumber } from "@/lib/format";
import { WORKSHOP_SERVICE } from "@/names/product";
import { replicaOfClientId } from "@/server/transport/replica-id";
import { getGroupMembers, type GroupMembers } from "../kafka/consumer-group";
import { errorText } from "../core/errors";
import { declaredGroupId, type DeclaredHandler } from "../core/handler-registry";
import type { MetricsSource, Sample } from "../metrics/source";

const plural = (n: number, one: string, many = `${one}s`) => `${formatNumber(n)} ${n === 1 ? one : many}`;

/**
 * The coverage of one service: `scraped` are the `consumer_instances` samples (any service; only
 * this one's are read), `groups` the service's consumer groups as Kafka describes them.
 */
export function compareScrapeWithGroups(
  service: string,
  scraped: readonly Sample[],
  groups: readonly GroupMembers[],
): ScrapeCoverage {
  const mine = scraped.filter((s) => s.labels.service === service && s.labels.replica && (s.value ?? 0) > 0);
  const scrapedReplicas = [...new Set(mine.map((s) => s.labels.replica!))].sort();
  const instances = new Set(mine.map((s) => s.labels.instance ?? "")).size;
  const seen = new Set(scrapedReplicas);
  const memberSet = new Set<string>();
  let assigned = 0;
  let assignedSeen = 0;
  for (const g of groups) {
    for (const m of g.members) {
      const r = replicaOfClientId(m.clientId);
      memberSet.add(r);
      assigned += m.partitions;
      if (seen.has(r)) assignedSeen += m.partitions;
    }
  }
  const memberReplicas = [...memberSet].sort();
  const unscraped = memberReplicas.filter((r) => !seen.has(r));
  const notInGroups = scrapedReplicas.filter((r) => !memberSet.has(r));
  const scrapedShare = assigned > 0 ? assignedSeen / assigned : null;
  const mismatch = unscraped.length > 0 || notInGroups.length > 0;
  let message: string | null = null;
  if (unscraped.length > 0) {
    const share =
      scrapedShare ??
      (memberReplicas.length > 0 ? (memberReplicas.length - unscraped.length) / memberReplicas.length : 0);
    message =
      `Prometheus scrapes ${plural(instances, "instance")} of ${service}, the consumer groups have ${plural(memberReplicas.length, "member")}: ` +
      `${unscraped.join(", ")} ${unscraped.length === 1 ? "is" : "are"} not scraped, so the figures show about ${formatShare(share)} of the traffic.`;
  } else if (notInGroups.length > 0) {
    message =
      `Prometheus scrapes ${plural(scrapedReplicas.length, "replica")} of ${service} that ${notInGroups.length === 1 ? "is" : "are"} in no consumer group ` +
      `(${notInGroups.join(", ")}): stopped within Prometheus's staleness window, or not joined yet.`;
  }
  return {
    service,
    instances,
    scrapedReplicas,
    memberReplicas,
    unscraped,
    notInGroups,
    scrapedShare,
    mismatch,
    message,
  };
}

/** 0.5 → "half", else a whole percentage ("33 %"). */
function formatShare(x: number): string {
  if (Math.abs(x - 0.5) < 0.005) return "half";
  return `${Math.round(x * 100)} %`;
}

/** The Overview's `scrapeCoverage` field. */
export type ScrapeCoverageField = { status: "ok"; services: ScrapeCoverage[] } | Unavailable | null;

/**
 * Builds the Overview's `scrapeCoverage`: the `consumer_instances` query and one DescribeGroups of
 * the declared handlers' groups, concurrently. `null` without Kafka (`members` resolves null).
 */
export async function buildScrapeCoverage(
  metrics: Pick<MetricsSource, "instant">,
  declared: readonly DeclaredHandler[],
  members: (
    groups: ReadonlyArray<{ groupId: string; topic: string }>,
  ) => Promise<GroupMembers[] | null> = getGroupMembers,
): Promise<ScrapeCoverageField> {
  const wanted = declared
    .filter((d) => d.topic !== undefined && d.service !== WORKSHOP_SERVICE)
    .map((d) => ({ service: d.service, groupId: declaredGroupId(d), topic: d.topic! }));
  const [groups, scraped] = await Promise.all([
    members(wanted).then(
      (value) => ({ ok: true as const, value }),
      (e: unknown) => ({ ok: false as const, detail: errorText(e) }),
    ),
    metrics.instant("consumer_instances").then(
      (value) => ({ ok: true as const, value }),
      (e: unknown) => ({ ok: false as const, detail: errorText(e) }),
    ),
  ]);
  if (groups.ok && groups.value === null) return null;
  if (!groups.ok) return { status: "unavailable", detail: groups.detail };
  if (!scraped.ok) return { status: "unavailable", detail: scraped.detail };
  const all = groups.value!;
  const services = [...new Set(wanted.map((w) => w.service))].sort();
  return {
    status: "ok",
    services: services.map((svc) => {
      const ids = new Set(wanted.filter((w) => w.service === svc).map((w) => w.groupId));
      return compareScrapeWithGroups(
        svc,
        scraped.value,
        all.filter((g) => ids.has(g.groupId)),
      );
    }),
  };
}
