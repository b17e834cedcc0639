/**
 * Consumer-group metrics the app exports about Kafka (server/observe/watchers/lag-metrics.ts), named as
 * danielqsj/kafka_exporter names them so dashboards and rules written for that exporter work
 * unchanged; the rebalance counter is ours (kafka_exporter has none). **Imports nothing.**
 */
export const KAFKA_METRIC_NAMES = {
  /** Gauge `{consumergroup, topic, partition}`: high watermark − max(committed, log start). */
  lag: "kafka_consumergroup_lag",
  /** Gauge `{consumergroup, topic}`: the sum of {@link KAFKA_METRIC_NAMES.lag} over partitions. */
  lagSum: "kafka_consumergroup_lag_sum",
  /** Gauge `{consumergroup, topic, partition}`: the group's committed offset (−1: never committed). */
  currentOffset: "kafka_consumergroup_current_offset",
  /** Gauge `{topic, partition}`: the log end offset (high watermark). */
  topicCurrentOffset: "kafka_topic_partition_current_offset",
  /** Gauge `{topic, partition}`: the log start offset. */
  topicOldestOffset: "kafka_topic_partition_oldest_offset",
  /** Gauge `{consumergroup}`: members of the group. */
  members: "kafka_consumergroup_members",
  /** Counter `{consumergroup}`: rebalances observed (the group's members or assignment changed). */
  rebalances: "kafka_consumergroup_rebalances_total",
} as const;

/** Label names of the consumer-group metrics, as kafka_exporter writes them. */
export const KAFKA_LABELS = { group: "consumergroup", topic: "topic", partition: "partition" } as const;

/**
 * The consumer group of one handler of a service: `<service>.<handler>` (each handler reads its
 * topic in a group of its own). Service names have no `.` (SERVICE_NAME's rule), so the first `.`
 * ends the service.
 */
export function handlerGroupId(service: string, handler: string): string {
  return `${service}.${handler}`;
}

/** The service and handler of a group named by {@link handlerGroupId}; null for a group named otherwise. */
export function groupOwner(groupId: string): { service: string; handler: string } | null {
  const dot = groupId.indexOf(".");
  return dot > 0 && dot < groupId.length - 1
    ? { service: groupId.slice(0, dot), handler: groupId.slice(dot + 1) }
    : null;
}
