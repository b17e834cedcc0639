/**
 * The DLQ header conventions the DLQ browser reads beside Watermill's poison metadata (names/dedup.ts),
 * written here once: Spring Kafka's `DeadLetterPublishingRecoverer` (`kafka_dlt-*`, `KafkaHeaders`)
 * and Kafka Connect's `DeadLetterQueueReporter` (`__connect.errors.*`). **Imports nothing.**
 */

/**
 * Which convention a DLQ record's headers follow: `watermill` (PoisonQueue's `*_poisoned` metadata,
 * ours and Go Watermill's), `spring` (`kafka_dlt-*`), `connect` (`__connect.errors.*`), `none`.
 */
export const DLQ_CONVENTION = { watermill: "watermill", spring: "spring", connect: "connect", none: "none" } as const;
/** One of {@link DLQ_CONVENTION}. */
export type DlqConvention = (typeof DLQ_CONVENTION)[keyof typeof DLQ_CONVENTION];
/** Every {@link DlqConvention}, in the order a record is read (the first that is present wins). */
export const DLQ_CONVENTIONS = [
  DLQ_CONVENTION.watermill,
  DLQ_CONVENTION.spring,
  DLQ_CONVENTION.connect,
  DLQ_CONVENTION.none,
] as const;

/** Prefix of every header Spring Kafka's `DeadLetterPublishingRecoverer` adds. */
export const SPRING_DLT_PREFIX = "kafka_dlt-";
/**
 * Spring Kafka's DLT headers (`KafkaHeaders.DLT_*`). Encodings as `DeadLetterRecordManager` writes
 * them: `originalPartition` a 4-byte big-endian int, `originalOffset` and `originalTimestamp` 8-byte
 * big-endian longs; every other one UTF-8 text. `originalConsumerGroup` is written only when the
 * failure was a `ListenerExecutionFailedException` (a listener's, not a deserializer's).
 */
export const SPRING_DLT = {
  originalTopic: "kafka_dlt-original-topic",
  originalPartition: "kafka_dlt-original-partition",
  originalOffset: "kafka_dlt-original-offset",
  originalTimestamp: "kafka_dlt-original-timestamp",
  originalTimestampType: "kafka_dlt-original-timestamp-type",
  originalConsumerGroup: "kafka_dlt-original-consumer-group",
  exceptionFqcn: "kafka_dlt-exception-fqcn",
  exceptionCauseFqcn: "kafka_dlt-exception-cause-fqcn",
  exceptionMessage: "kafka_dlt-exception-message",
  exceptionStacktrace: "kafka_dlt-exception-stacktrace",
} as const;

/** Spring's binary DLT headers and their byte length (big-endian two's complement). */
export const SPRING_DLT_BINARY: Readonly<Record<string, 4 | 8>> = {
  [SPRING_DLT.originalPartition]: 4,
  [SPRING_DLT.originalOffset]: 8,
  [SPRING_DLT.originalTimestamp]: 8,
};

/** Prefix of every header Kafka Connect's DLQ reporter adds (`errors.deadletterqueue.context.headers.enable`). */
export const CONNECT_ERRORS_PREFIX = "__connect.errors.";
/** Kafka Connect's DLQ context headers: every one UTF-8 text (partition and offset as decimal text). */
export const CONNECT_ERRORS = {
  topic: "__connect.errors.topic",
  partition: "__connect.errors.partition",
  offset: "__connect.errors.offset",
  connectorName: "__connect.errors.connector.name",
  taskId: "__connect.errors.task.id",
  stage: "__connect.errors.stage",
  className: "__connect.errors.class.name",
  exceptionClassName: "__connect.errors.exception.class.name",
  exceptionMessage: "__connect.errors.exception.message",
  exceptionStacktrace: "__connect.errors.exception.stacktrace",
} as const;
