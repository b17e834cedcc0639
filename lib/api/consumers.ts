/**
 * Query and response of `GET /api/consumers`: which replica of a consumer group holds which
 * partitions of a topic, the lag of each partition, and each replica's processed rate.
 *
 * Conventions as in `lib/api/common.ts`: offsets and lags are message counts, rates are per second,
 * times are ISO-8601; every non-2xx body is `{ error, detail }`.
 */
import { z } from "zod";
import { answerSchema, topicNameSchema } from "./common";

/** `GET /api/consumers?topic=&group=`: a topic (absent: the server's `DEMO_TOPIC`) and optionally one group. */
export const consumersQuerySchema = z.object({
  topic: topicNameSchema.optional(),
  group: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, "expected a consumer group id: 1-255 printable characters without spaces")
    .optional(),
});
/** Query of `GET /api/consumers` as the server describes it: the topic resolved (the request's, else `DEMO_TOPIC`). */
export type ConsumersQuery = z.infer<typeof consumersQuerySchema> & { topic: string };

/** One member (replica) of a consumer group. */
export const consumerMemberSchema = z.object({
  /** Kafka's member id (changes every time the replica rejoins). */
  memberId: z.string(),
  /** The replica's kafkajs `clientId` (set it per replica to tell them apart). */
  clientId: z.string(),
  /**
   * The replica id in the clientId (`<groupId>/<replica>`, as this app's consumers name
   * themselves: `<hostname>-<pid>`, `-r1` for a further replica of the process); the whole
   * clientId for a client named otherwise.
   */
  replica: z.string(),
  /** The address the broker sees the replica connect from. */
  host: z.string(),
  /** Partitions of the topic assigned to this member, ascending. */
  partitions: z.array(z.number().int()),
  /** Sum of the lag of its partitions. */
  lag: z.number(),
  /**
   * Messages per second this member committed over the last window (offset progress of its
   * partitions); `null` until two observations at least a second apart exist.
   */
  processedPerSecond: z.number().nullable(),
});
/** One member (replica) of a consumer group. */
export type ConsumerMember = z.infer<typeof consumerMemberSchema>;

/** One partition of the topic as seen by a group. */
export const consumerPartitionSchema = z.object({
  partition: z.number().int(),
  /** The member holding it; `null` when none does (group empty or rebalancing). */
  memberId: z.string().nullable(),
  clientId: z.string().nullable(),
  /** The group's committed offset (next message to read); `null` when it never committed. */
  committedOffset: z.number().nullable(),
  /** Log start offset: records before it were deleted (retention, DeleteRecords). */
  startOffset: z.number(),
  /** Log end offset (high watermark). */
  endOffset: z.number(),
  /** Messages not yet consumed: end − max(committed, log start); end − log start when nothing was committed. */
  lag: z.number(),
  processedPerSecond: z.number().nullable(),
});
/** One partition of the topic as seen by a group. */
export type ConsumerPartition = z.infer<typeof consumerPartitionSchema>;

/** A consumer group's view of one topic. */
export const consumerGroupViewSchema = z.object({
  groupId: z.string(),
  /** Kafka's group state: Stable, PreparingRebalance, CompletingRebalance, Empty, Dead. */
  state: z.string(),
  /** The partition assignor in use (e.g. RoundRobinAssigner). */
  protocol: z.string(),
  members: z.array(consumerMemberSchema),
  partitions: z.array(consumerPartitionSchema),
  totalLag: z.number(),
  /** Partitions of the topic no member holds (normal only while Empty or rebalancing). */
  unassigned: z.array(z.number().int()),
  /** Partitions held by more than one member: must never happen; shown so it cannot hide. */
  overlapping: z.array(z.number().int()),
  /** Length of the window the rates were measured over; `null` on the first observation. */
  rateWindowSeconds: z.number().nullable(),
});
/** A consumer group's view of one topic. */
export type ConsumerGroupView = z.infer<typeof consumerGroupViewSchema>;

/** Answer of `GET /api/consumers`. */
export const consumersResponseSchema = answerSchema({
  topic: z.string(),
  /** Number of partitions of the topic. */
  partitionCount: z.number().int(),
  /** Groups consuming the topic (members assigned to it, or offsets committed on it), by id. */
  groups: z.array(consumerGroupViewSchema),
});
/** Answer of `GET /api/consumers`. */
export type ConsumersResponse = z.infer<typeof consumersResponseSchema>;
