/**
 * The consumer-group description behind `GET /api/consumers`: which member (replica) of
 * a group holds which partitions of a topic, the lag of each partition, and each replica's
 * processed rate, derived from the progress of the group's committed offsets between two calls.
 *
 * Read from Kafka's admin API (ListGroups, DescribeGroups, OffsetFetch, ListOffsets): no consumer
 * joins the group, so looking never triggers a rebalance.
 */
import { AssignerProtocol, Kafka, logLevel, type Admin } from "kafkajs";
import type { ConsumerGroupView, ConsumersQuery, ConsumersResponse } from "@/lib/api/consumers";
import { config } from "@/server/config";
import { withTimeout } from "@/server/dedup";
import {
  assembleGroupView,
  RateHistory,
  type GroupSnapshot,
  type OffsetObservation,
  type PartitionOffsets,
} from "./consumer-group-view";
import { NotFoundError, UpstreamUnavailableError, errorText } from "../core/errors";

export {
  assembleGroupView,
  partitionLag,
  type GroupSnapshot,
  type OffsetObservation,
  type PartitionOffsets,
} from "./consumer-group-view";

/** Options of the {@link ConsumerGroupDescriber}. */
export interface ConsumerGroupOptions {
  /** Time allowed for one admin request (and for connecting). 100..30000. @default 3000 */
  requestTimeoutMs: number;
  /**
   * Shortest window a rate is measured over. A rate always ends at the current call and starts at
   * the latest earlier observation at least this old. 200..600000. @default 1000
   */
  minRateWindowMs: number;
  /** Most groups described when no group is asked for (a shared broker may hold many). 1..500. @default 50 */
  maxGroups: number;
}

/** Defaults of {@link ConsumerGroupOptions}. */
export const DEFAULT_CONSUMER_GROUP_OPTIONS: ConsumerGroupOptions = {
  requestTimeoutMs: 3000,
  minRateWindowMs: 1000,
  maxGroups: 50,
};

/** The admin calls the describer uses (a kafkajs `Admin` fits). */
export type ConsumerAdmin = Pick<
  Admin,
  "listTopics" | "fetchTopicOffsets" | "listGroups" | "describeGroups" | "fetchOffsets"
>;

/** A group's members as {@link ConsumerGroupDescriber.members} reads them (no assignment, no offsets). */
export interface GroupMembers {
  groupId: string;
  state: string;
  /** Each member's clientId, host and how many partitions of the group's topic it holds. */
  members: Array<{ clientId: string; host: string; partitions: number }>;
}

/** Partitions of `topic` in a member's assignment (kafkajs' consumer protocol encoding); [] when empty or unreadable. */
export function decodeAssignment(memberAssignment: Buffer | null | undefined, topic: string): number[] {
  if (!memberAssignment || memberAssignment.length === 0) return [];
  try {
    const decoded = AssignerProtocol.MemberAssignment.decode(memberAssignment);
    return [...(decoded?.assignment[topic] ?? [])].sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/** Rejects with a timeout error after `ms`. */
function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return withTimeout(p, ms, () => new Error(`${what} took longer than ${ms} ms`));
}

/**
 * Describes the consumer groups of a topic through a kafkajs admin client, remembering committed
 * offsets between calls to derive rates. One per process (see {@link consumerGroupDescriber}).
 */
export class ConsumerGroupDescriber {
  private readonly opts: ConsumerGroupOptions;
  private readonly history: RateHistory;

  constructor(
    private readonly admin: ConsumerAdmin,
    opts: Partial<ConsumerGroupOptions> = {},
    private readonly clock: () => number = Date.now,
  ) {
    const o = { ...DEFAULT_CONSUMER_GROUP_OPTIONS, ...opts };
    const range = (name: keyof ConsumerGroupOptions, lo: number, hi: number) => {
      const v = o[name];
      if (!Number.isInteger(v) || v < lo || v > hi)
        throw new RangeError(`${name}: expected an integer in ${lo}..${hi}, got ${v}`);
    };
    range("requestTimeoutMs", 100, 30_000);
    range("minRateWindowMs", 200, 600_000);
    range("maxGroups", 1, 500);
    this.opts = o;
    this.history = new RateHistory(o.minRateWindowMs);
  }

  /**
   * The topic's partitions and, per group consuming it, members, assignments, lag and rates.
   * @throws NotFoundError when the topic, or the group asked for, does not exist.
   * @throws UpstreamUnavailableError when Kafka does not answer.
   */
  async describe(q: ConsumersQuery): Promise<ConsumersResponse> {
    const { offsets, groups: snapshots } = await this.read(q);
    const groups: ConsumerGroupView[] = snapshots.map((g) => {
      const now: OffsetObservation = { at: this.clock(), committed: g.committed };
      return assembleGroupView(offsets, g, now, this.history.previous(`${g.groupId}\u0000${q.topic}`, now));
    });
    return {
      generatedAt: new Date(this.clock()).toISOString(),
      topic: q.topic,
      partitionCount: offsets.length,
      groups,
    };
  }

  /**
   * The topic's partition offsets and, per group consuming it (or the one asked for), its members
   * with their assignment of the topic and its committed offsets — the raw reads behind
   * {@link describe} and the lag metrics (server/observe/watchers/lag-metrics.ts).
   * @throws NotFoundError when the topic, or the group asked for, does not exist.
   * @throws UpstreamUnavailableError when Kafka does not answer.
   */
  async read(q: ConsumersQuery): Promise<{ offsets: PartitionOffsets[]; groups: GroupSnapshot[] }> {
    const t = this.opts.requestTimeoutMs;
    const call = <T>(p: Promise<T>, what: string): Promise<T> =>
      bounded(p, t, `kafka ${what}`).catch((e: unknown) => {
        throw new UpstreamUnavailableError(`kafka: ${what} failed: ${errorText(e)}`);
      });
    const topics = await call(this.admin.listTopics(), "listTopics");
    if (!topics.includes(q.topic)) throw new NotFoundError(`topic ${q.topic} does not exist on the broker`);
    const offsets: PartitionOffsets[] = (await call(this.admin.fetchTopicOffsets(q.topic), "fetchTopicOffsets")).map(
      (o) => ({
        partition: o.partition,
        low: Number(o.low),
        high: Number(o.high),
      }),
    );

    let ids: string[];
    if (q.group) ids = [q.group];
    else {
      const { groups } = await call(this.admin.listGroups(), "listGroups");
      ids = groups.filter((g) => g.protocolType === "consumer" || g.protocolType === "").map((g) => g.groupId);
    }
    const described = ids.length === 0 ? [] : (await call(this.admin.describeGroups(ids), "describeGroups")).groups;
    const candidates = described
      .map((g) => ({
        groupId: g.groupId,
        state: g.state,
        protocol: g.protocol,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          clientId: m.clientId,
          host: m.clientHost.replace(/^\//, ""),
          partitions: decodeAssignment(m.memberAssignment, q.topic),
        })),
      }))
      // Without a group asked for: groups with a member assigned the topic first, then groups with
      // no member at all (a stopped consumer: kept below if it committed offsets on the topic).
      .filter(
        (g) =>
          q.group !== undefined ||
          g.members.some((m) => m.partitions.length > 0) ||
          (g.members.length === 0 && g.state === "Empty"),
      )
      .sort(
        (a, b) => Number(a.members.length === 0) - Number(b.members.length === 0) || a.groupId.localeCompare(b.groupId),
      )
      .slice(0, this.opts.maxGroups);

    // Offsets of every candidate, 10 requests at a time.
    const fetchedAll: Array<Awaited<ReturnType<ConsumerAdmin["fetchOffsets"]>>> = [];
    for (let i = 0; i < candidates.length; i += 10) {
      fetchedAll.push(
        ...(await Promise.all(
          candidates
            .slice(i, i + 10)
            .map((g) => call(this.admin.fetchOffsets({ groupId: g.groupId, topics: [q.topic] }), "fetchOffsets")),
        )),
      );
    }
    const groups: GroupSnapshot[] = [];
    for (const [i, g] of candidates.entries()) {
      const fetched = fetchedAll[i]!;
      const committed = new Map<number, number | null>();
      for (const p of fetched.find((x) => x.topic === q.topic)?.partitions ?? []) {
        const n = Number(p.offset);
        // Kafka answers −1 for a partition the group never committed.
        committed.set(p.partition, Number.isFinite(n) && n >= 0 ? n : null);
      }
      if (g.members.length === 0 && [...committed.values()].every((v) => v === null)) {
        if (q.group)
          throw new NotFoundError(`consumer group ${q.group} has no members and no committed offsets on ${q.topic}`);
        continue; // an empty group of another topic
      }
      groups.push({ ...g, committed });
    }
    return { offsets, groups };
  }

  /**
   * The members of `groups` (one DescribeGroups request; no offsets), each with the number of
   * partitions of the group's topic it holds: what the Overview compares with the replicas
   * Prometheus scrapes. Unknown groups come back with no members.
   * @throws UpstreamUnavailableError when Kafka does not answer.
   */
  async members(groups: ReadonlyArray<{ groupId: string; topic: string }>): Promise<GroupMembers[]> {
    if (groups.length === 0) return [];
    const ids = [...new Set(groups.map((g) => g.groupId))];
    const described = await bounded(
      this.admin.describeGroups(ids),
      this.opts.requestTimeoutMs,
      "kafka describeGroups",
    ).catch((e: unknown) => {
      throw new UpstreamUnavailableError(`kafka: describeGroups failed: ${errorText(e)}`);
    });
    const topicOf = new Map(groups.map((g) => [g.groupId, g.topic]));
    return described.groups.map((g) => ({
      groupId: g.groupId,
      state: g.state,
      members: g.members.map((m) => ({
        clientId: m.clientId,
        host: m.clientHost.replace(/^\//, ""),
        partitions: decodeAssignment(m.memberAssignment, topicOf.get(g.groupId) ?? "").length,
      })),
    }));
  }
}

type G = typeof globalThis & {
  __dedupHealthConsumers?: { describer: ConsumerGroupDescriber; admin: Admin; connected: Promise<void> | null };
};

/**
 * The process's describer over `KAFKA_BROKERS` (kept on `globalThis`: Next.js loads modules more
 * than once); `null` when Kafka is not configured.
 */
export function consumerGroupDescriber(): { describer: ConsumerGroupDescriber; ready: () => Promise<void> } | null {
  const brokers = config().KAFKA_BROKERS;
  if (!brokers || brokers.length === 0) return null;
  const g = globalThis as G;
  if (!g.__dedupHealthConsumers) {
    const o = DEFAULT_CONSUMER_GROUP_OPTIONS;
    const admin = new Kafka({
      clientId: "dedup-health-observe",
      brokers: [...brokers],
      logLevel: logLevel.NOTHING,
      connectionTimeout: o.requestTimeoutMs,
      requestTimeout: o.requestTimeoutMs,
      retry: { retries: 1 },
    }).admin();
    g.__dedupHealthConsumers = { describer: new ConsumerGroupDescriber(admin), admin, connected: null };
  }
  const s = g.__dedupHealthConsumers;
  return {
    describer: s.describer,
    ready: () => {
      s.connected ??= bounded(
        s.admin.connect(),
        DEFAULT_CONSUMER_GROUP_OPTIONS.requestTimeoutMs,
        "kafka connect",
      ).catch((e: unknown) => {
        s.connected = null; // try again on the next request
        throw new UpstreamUnavailableError(`kafka: cannot connect to ${brokers.join(",")}: ${errorText(e)}`);
      });
      return s.connected;
    },
  };
}

/**
 * The members of `groups` for this process's Kafka; `null` when Kafka is not configured (embedded).
 * @throws UpstreamUnavailableError when Kafka is down.
 */
export async function getGroupMembers(
  groups: ReadonlyArray<{ groupId: string; topic: string }>,
): Promise<GroupMembers[] | null> {
  const d = consumerGroupDescriber();
  if (!d) return null;
  await d.ready();
  return d.describer.members(groups);
}
