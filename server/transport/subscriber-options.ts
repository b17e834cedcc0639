/**
 * The knobs of a group subscriber that the partition pump reads ({@link SubscriberOptions}), and the
 * record it cannot decode ({@link UnreadableRecord}) as its hooks see it.
 */
import type { Publisher, DedupRepository, Message } from "@/server/dedup";

/** What to do after a chunk was acked, before its offsets are committed (fault injection). */
export type BeforeCommit = (acked: readonly Message[]) => "commit" | "crash";

/** A record that could not be decoded (no / unreadable UUID header). */
export interface UnreadableRecord {
  topic: string;
  partition: number;
  offset: string;
  reason: string;
  metadata: Record<string, string>;
  payload: Buffer;
  /** The record key, kept by its DLQ copy. */
  key?: Buffer;
}

/** The knobs every group subscriber has (Kafka and embedded); each transport adds its own. */
export interface SubscriberOptions {
  /** Consumer group. Required. One `subscribe` per topic per subscriber (the group's members must subscribe alike). */
  groupId: string;
  /** Replica name, written into `context.subscriber` as `<transport>/<replica>` (timeline, `subscriber_poisoned`). @default a random id */
  replica?: string;
  /**
   * The handler this subscriber feeds: `handler_poisoned` of the DLQ copy of an unreadable record
   * it owns (the DLQ panels group by it). @default the groupId
   */
  handler?: string;
  /** Messages per sink call (`deliverBatch`: one pre-claim round trip each). @default the transport's (Kafka 100, embedded 20) */
  chunkSize?: number;
  /** Pause before a nacked message is redelivered. @default the transport's (Kafka 200, embedded 50) */
  nackDelayMs?: number;
  /**
   * Commit acked offsets at most this often (0 = as soon as possible: Kafka once per fetched batch,
   * embedded after every chunk). A rebalance re-reads the acked-but-uncommitted tail — the
   * "rebalance" duplicate source of spec §1 (the Deduplicator swallows the re-reads). An idle
   * partition's pending offsets are committed once the interval has passed; a graceful stop commits
   * what is pending. @default 0
   */
  commitIntervalMs?: number;
  /**
   * Where a record without a readable `_watermill_message_uuid` goes: published (raw payload and
   * headers plus `reason_poisoned` = `marshal: …`, `topic_poisoned`, …) to `topic` and committed.
   * Without it such a record is skipped after `onUnreadable`. **Set it**: the demo and workers do.
   */
  dlq?: {
    publisher: Publisher;
    topic: string;
    /**
     * Where the one DLQ copy per source record is remembered (`dlq:<topic>:<partition>:<offset>`,
     * the Deduplicator's lease protocol, 7 days): a record read again after its copy was published
     * but before its offset was committed (a rebalance, a restart) gets no second copy. **Set it**
     * (the Deduplicator's repository); without it such a record is published again. @default none
     */
    repository?: DedupRepository;
  };
  /** Called for every unreadable record (the demo counts `deduplication_errors_total{reason="marshal"}`). @default none */
  onUnreadable?: (rec: UnreadableRecord) => void;
  /**
   * Whether this subscriber owns an unreadable record: sends it to the DLQ and calls
   * `onUnreadable`; otherwise it only skips (commits) it. When several groups read one topic,
   * let exactly one own each record. @default always
   */
  claimsUnreadable?: (rec: UnreadableRecord) => boolean;
  /**
   * Called after the stack acked a chunk and before its offsets are committed. Returning `"crash"`
   * makes the replica leave at once **without committing** those offsets — the "restart before
   * commit" duplicate source of spec §1. @default always "commit"
   */
  beforeCommit?: BeforeCommit;
}
