/**
 * Consumer-group lag as metrics, so Prometheus keeps its history: per group, topic and partition,
 * read through Kafka's admin API at each scrape of `/api/metrics` (as kafka_exporter does; names
 * in names/kafka.ts follow it), with the log-start clamp of {@link partitionLag}. Rebalances are
 * counted as they are observed: the group's members or their assignment changed since the last
 * scrape (kafkajs' DescribeGroups answer has no generation id; every new generation reassigns).
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { groupOwner, KAFKA_LABELS as L, KAFKA_METRIC_NAMES as N } from "@/names/kafka";
import { config } from "@/server/config";
import { appRegistry } from "@/server/registry";
import { exportsFleetGauges } from "@/server/replicas/leader";
import {
  consumerGroupDescriber,
  partitionLag,
  type GroupSnapshot,
  type PartitionOffsets,
} from "../kafka/consumer-group";
import { recordEvent } from "../shared/events";
import { declaredGroupId, declaredHandlers } from "../core/handler-registry";

/**
 * The topics whose consumer groups' lag is exported: `configured` (CONSUMER_TOPICS) and every topic
 * a handler of the fleet declares consuming (its `dedup_handler_info` as last read, or this
 * process's registration) — a Java consumer's topic is not one of the dashboard's settings.
 */
export function lagTopics(configured: readonly string[]): string[] {
  return [...new Set([...configured, ...declaredHandlers().flatMap((d) => (d.topic ? [d.topic] : []))])];
}

/** The handler a consumer group belongs to: the one that declares it, else the `<service>.<handler>` naming. */
function ownerOfGroup(groupId: string): { service: string; handler: string } | null {
  const d = declaredHandlers().find((h) => declaredGroupId(h) === groupId);
  return d ? { service: d.service, handler: d.setup.handler } : groupOwner(groupId);
}

/** Reads one topic's offsets and the groups consuming it (`ConsumerGroupDescriber.read`). */
export type TopicReader = (topic: string) => Promise<{ offsets: PartitionOffsets[]; groups: GroupSnapshot[] }>;

/** What a group's assignment looks like: member ids with their partitions, sorted. */
function assignmentOf(g: GroupSnapshot): string {
  return g.members
    .map((m) => `${m.memberId}:${m.partitions.join(",")}`)
    .sort()
    .join(" ");
}

/**
 * The consumer-group gauges on `registry`, filled at each scrape from `read` over `topics`. One
 * read per scrape (the gauges share it); a failed read leaves them empty until the next.
 */
export class LagMetrics {
  private readonly lag: Gauge;
  private readonly lagSum: Gauge;
  private readonly current: Gauge;
  private readonly high: Gauge;
  private readonly low: Gauge;
  private readonly members: Gauge;
  private readonly rebalances: Counter;
  private readonly seen = new Map<string, { assignment: string; members: number }>();
  private inflight: Promise<void> | null = null;

  constructor(
    registry: Registry,
    private readonly topics: () => readonly string[],
    private readonly read: TopicReader,
  ) {
    const refresh = () => this.refresh();
    const gauge = (name: string, help: string, labelNames: string[]) =>
      (registry.getSingleMetric(name) as Gauge | undefined) ??
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          await refresh();
        },
      });
    this.lag = gauge(N.lag, "Messages a consumer group has not consumed: high watermark - max(committed, log start)", [
      L.group,
      L.topic,
      L.partition,
    ]);
    this.lagSum = gauge(N.lagSum, "Sum of kafka_consumergroup_lag over the topic's partitions", [L.group, L.topic]);
    this.current = gauge(N.currentOffset, "The consumer group's committed offset (-1: never committed)", [
      L.group,
      L.topic,
      L.partition,
    ]);
    this.high = gauge(N.topicCurrentOffset, "Log end offset (high watermark) of the partition", [L.topic, L.partition]);
    this.low = gauge(N.topicOldestOffset, "Log start offset of the partition", [L.topic, L.partition]);
    this.members = gauge(N.members, "Members of the consumer group", [L.group]);
    this.rebalances =
      (registry.getSingleMetric(N.rebalances) as Counter | undefined) ??
      new Counter({
        name: N.rebalances,
        help: "Rebalances observed: the group's members or their assignment changed between two reads",
        labelNames: [L.group],
        registers: [registry],
      });
  }

  /** Reads every topic once (concurrent scrapes share the read) and sets the gauges. */
  refresh(): Promise<void> {
    this.inflight ??= this.readAll().finally(() => (this.inflight = null));
    return this.inflight;
  }

  private async readAll(): Promise<void> {
    // A follower replica exports none of the fleet's lag (the leader does) and observes no rebalance.
    if (!exportsFleetGauges()) {
      for (const g of [this.lag, this.lagSum, this.current, this.high, this.low, this.members, this.rebalances])
        g.reset();
      this.seen.clear();
      return;
    }
    const results = await Promise.all(
      this.topics().map(async (topic) => ({ topic, r: await this.read(topic).catch(() => null) })),
    );
    for (const g of [this.lag, this.lagSum, this.current, this.high, this.low, this.members]) g.reset();
    for (const { topic, r } of results) {
      if (!r) continue;
      for (const o of r.offsets) {
        this.high.set({ [L.topic]: topic, [L.partition]: String(o.partition) }, o.high);
        this.low.set({ [L.topic]: topic, [L.partition]: String(o.partition) }, o.low);
      }
      for (const g of r.groups) this.setGroup(topic, r.offsets, g);
    }
  }

  private setGroup(topic: string, offsets: readonly PartitionOffsets[], g: GroupSnapshot): void {
    let sum = 0;
    for (const o of offsets) {
      const committed = g.committed.get(o.partition) ?? null;
      const labels = { [L.group]: g.groupId, [L.topic]: topic, [L.partition]: String(o.partition) };
      const lag = partitionLag(o, committed);
      sum += lag;
      this.lag.set(labels, lag);
      this.current.set(labels, committed ?? -1);
    }
    this.lagSum.set({ [L.group]: g.groupId, [L.topic]: topic }, sum);
    this.members.set({ [L.group]: g.groupId }, g.members.length);
    // The counter exists from the group's first read (0), so its first rebalance is an increase.
    this.rebalances.inc({ [L.group]: g.groupId }, 0);
    const assignment = assignmentOf(g);
    const key = `${g.groupId}\u0000${topic}`;
    const before = this.seen.get(key);
    this.seen.set(key, { assignment, members: g.members.length });
    if (before && before.assignment !== assignment) {
      this.rebalances.inc({ [L.group]: g.groupId });
      // The group's handler (declared, else by the <service>.<handler> naming): the marker then shows on its charts.
      const owner = ownerOfGroup(g.groupId) ?? {};
      void recordEvent("rebalance", `Rebalance of ${g.groupId}: ${before.members} → ${g.members.length} members`, {
        consumergroup: g.groupId,
        topic,
        ...owner,
      });
    }
  }
}

type G = typeof globalThis & { __dedupHealthLagMetrics?: LagMetrics };

/**
 * Registers the consumer-group metrics on the app's registry (what `/api/metrics` serves) over
 * `CONSUMER_TOPICS` and the topics the fleet's handlers declare ({@link lagTopics}); once per
 * process, and only with `KAFKA_BROKERS` set.
 */
export function startLagMetrics(): LagMetrics | null {
  const g = globalThis as G;
  if (g.__dedupHealthLagMetrics) return g.__dedupHealthLagMetrics;
  const d = consumerGroupDescriber();
  if (!d) return null;
  g.__dedupHealthLagMetrics = new LagMetrics(
    appRegistry(),
    () => lagTopics(config().CONSUMER_TOPICS),
    async (topic) => {
      await d.ready();
      return d.describer.read({ topic });
    },
  );
  return g.__dedupHealthLagMetrics;
}
