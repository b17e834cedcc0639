/**
 * Where a poisoned message goes and how it comes back, written once: the DLQ topic of a consumer
 * topic, the repository keys of a DLQ copy, and the re-drive modes with their metadata. Beside
 * PoisonQueue's metadata keys (names/dedup.ts).
 * **Imports nothing**, so the library, the dashboard and the browser read the same names.
 */

/**
 * Metadata of a message re-driven with a new UUID (`new-uuid` mode): the UUID of the DLQ record it
 * was re-driven from, so the new event can be traced back to the one the publisher reused.
 */
export const REDRIVEN_FROM_UUID_KEY = "redriven_from_uuid";
/**
 * How a re-drive identifies the message it publishes: `same-uuid` (the same event again: a correct
 * Deduplicator processes it once) or `new-uuid` (a UUID derived from the DLQ record's position: the
 * way out of a payload conflict, whose UUID is already done with another payload).
 */
export const REDRIVE_MODE = { sameUuid: "same-uuid", newUuid: "new-uuid" } as const;
/** One of {@link REDRIVE_MODE}. */
export type RedriveMode = (typeof REDRIVE_MODE)[keyof typeof REDRIVE_MODE];
/** Every {@link RedriveMode}. */
export const REDRIVE_MODES = [REDRIVE_MODE.sameUuid, REDRIVE_MODE.newUuid] as const;

/** Repository key of the one DLQ copy of the record at `topic`/`partition`/`offset`: `dlq:<topic>:<partition>:<offset>`. */
export function dlqCopyKey(topic: string, partition: number, offset: string): string {
  return `dlq:${topic}:${partition}:${offset}`;
}

/** A poisoned delivery: who failed on which message, read where (the parts of {@link poisonedCopyKey}). */
export interface PoisonedDelivery {
  readonly service: string;
  readonly handler: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly uuid: string;
}

/**
 * Repository key of the one DLQ copy PoisonQueue publishes when a handler fails on a delivery:
 * `dlq:<topic>:<partition>:<offset>:<service>:<handler>:<uuid>`. Under {@link dlqCopyKey}'s
 * `dlq:<topic>:` so one pattern finds both; the service and handler because each consumer group
 * that fails on the record owes its own copy; the uuid because a topic deleted and created again
 * under the same name reuses its offsets, and an old key must not swallow another record's copy.
 */
export function poisonedCopyKey(d: PoisonedDelivery): string {
  return `${dlqCopyKey(d.topic, d.partition, d.offset)}:${d.service}:${d.handler}:${d.uuid}`;
}

/** Suffix of a consumer topic's DLQ topic: `demo.events` → `demo.events.dlq`. */
export const DLQ_TOPIC_SUFFIX = ".dlq";

/** The DLQ topic of a consumer topic (`<topic>.dlq`). */
export function dlqTopicOf(topic: string): string {
  return `${topic}${DLQ_TOPIC_SUFFIX}`;
}
