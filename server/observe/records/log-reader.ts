/**
 * The one seam the record views read through: a topic's partitions with their offset range, and
 * records from an offset on. Kafka's log ({@link KafkaLogReader} in ./kafka-reader) and the
 * embedded broker's ({@link MemoryLogReader} in ./memory-reader) both implement it, so
 * `GET /api/records`, `GET /api/dlq` and `POST /api/dlq/redrive` answer the same shapes within the
 * same bounds in both modes.
 */

/** A record as read from the log (header values raw). */
export interface RawRecord {
  topic: string;
  partition: number;
  offset: bigint;
  /** Milliseconds since the epoch (CreateTime or LogAppendTime, as the topic keeps it). */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | string | Array<Buffer | string> | undefined>;
}

/** Low (log start) and high (log end) offsets of a partition. */
export interface PartitionRange {
  partition: number;
  low: bigint;
  high: bigint;
}

/** Reads a topic's log by offset, never as a member of a consumer group. */
export interface LogReader {
  /** Partitions of `topic` with their low and high offsets; throws {@link TopicMissingError}. */
  ranges(topic: string): Promise<PartitionRange[]>;
  /**
   * Records of `topic`/`partition` from `offset` on, at most about `maxBytes` (at least one record
   * when there is one), in offset order.
   */
  fetchFrom(topic: string, partition: number, offset: bigint, maxBytes: number): Promise<RawRecord[]>;
  /** Releases the reader's connection, if it has one. */
  close(): Promise<void>;
}

/** The topic does not exist on the cluster. */
export class TopicMissingError extends Error {
  constructor(readonly topic: string) {
    super(`topic ${topic} does not exist`);
    this.name = "TopicMissingError";
  }
}

/**
 * Whether `e` says the topic does not exist. By name, not `instanceof`: the reader is registered by
 * the instrumentation's copy of this module, and each route bundle loads a copy of its own.
 */
export function isTopicMissing(e: unknown): e is TopicMissingError {
  return e instanceof Error && e.name === "TopicMissingError";
}
