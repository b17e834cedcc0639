/**
 * Replica identity: every consumer replica is named `<hostname>-<pid>` (a second replica in the same
 * process adds a suffix, `-r1`, `-crash1`), so two processes in the same consumer groups never look
 * alike in the group's member list, in the DLQ header `subscriber_poisoned` or on the consumers
 * panel; and the app exports each live replica as `dedup_consumer_info{service, replica} 1`, which
 * Prometheus labels with the `instance` it scraped — the join the Overview uses to say when the
 * dashboard sees fewer replicas than the consumer groups have.
 */
import { hostname } from "node:os";
import { Gauge, type Registry } from "prom-client";
import { CONSUMER_INFO_METRIC } from "@/names/observe";

/** This process's replica id, `<hostname>-<pid>`. */
export function processReplicaId(): string {
  return `${hostname()}-${process.pid}`;
}

/** A replica id of this process: {@link processReplicaId}, plus `-<suffix>` for a further replica in it. */
export function replicaId(suffix?: string): string {
  return suffix ? `${processReplicaId()}-${suffix}` : processReplicaId();
}

/**
 * The replica of a consumer-group member, from its kafkajs clientId (`<groupId>/<replica>`, as
 * `KafkaSubscriber` sets it); the whole clientId when it has no `/` (a client we did not name).
 */
export function replicaOfClientId(clientId: string): string {
  const i = clientId.lastIndexOf("/");
  return i >= 0 ? clientId.slice(i + 1) : clientId;
}

/** The `dedup_consumer_info` gauge of a registry (get-or-create: modules may be evaluated twice). */
export function consumerInfoGauge(registry: Registry): Gauge<"service" | "replica"> {
  const existing = registry.getSingleMetric(CONSUMER_INFO_METRIC);
  if (existing) return existing as Gauge<"service" | "replica">;
  return new Gauge({
    name: CONSUMER_INFO_METRIC,
    help: "1 per live consumer replica of this process (replica = the id in its consumer-group clientId); Prometheus adds the instance it scraped",
    labelNames: ["service", "replica"],
    registers: [registry],
  });
}
