/**
 * What a consumer group's reads become on `GET /api/consumers`: each partition's lag, each member's
 * share, the processed rates from the progress of committed offsets between two reads, and the
 * history of observations those rates are measured against. No I/O: the reads are in
 * ./consumer-group.ts.
 */
import type { ConsumerGroupView, ConsumerMember, ConsumerPartition } from "@/lib/api/consumers";
import { replicaOfClientId } from "@/server/transport/replica-id";

/** Offsets of one partition of the topic. */
export interface PartitionOffsets {
  partition: number;
  /** Log start offset. */
  low: number;
  /** Log end offset (high watermark). */
  high: number;
}

/** One group as the admin API describes it, with assignments decoded for the topic. */
export interface GroupSnapshot {
  groupId: string;
  state: string;
  protocol: string;
  members: Array<{ memberId: string; clientId: string; host: string; partitions: number[] }>;
  /** Committed offset per partition; `null` = never committed. */
  committed: ReadonlyMap<number, number | null>;
}

/** Committed offsets observed at one time, for rates. */
export interface OffsetObservation {
  at: number;
  committed: ReadonlyMap<number, number | null>;
}

/**
 * Builds a group's view of the topic from raw offsets and the group's description. Rates compare
 * `now` with `previous` (per partition: committed progress / seconds; a member's rate is the sum
 * over the partitions it holds now). Pure: the reads are in ./consumer-group.ts.
 */
export function assembleGroupView(
  offsets: readonly PartitionOffsets[],
  group: GroupSnapshot,
  now: OffsetObservation,
  previous: OffsetObservation | null,
): ConsumerGroupView {
  const windowSeconds = previous && now.at > previous.at ? (now.at - previous.at) / 1000 : null;
  const owners = new Map<number, Array<GroupSnapshot["members"][number]>>();
  for (const m of group.members) for (const p of m.partitions) owners.set(p, [...(owners.get(p) ?? []), m]);

  const partitions: ConsumerPartition[] = [...offsets]
    .sort((a, b) => a.partition - b.partition)
    .map((o) => {
      const committed = now.committed.get(o.partition) ?? null;
      const lag = partitionLag(o, committed);
      const before = previous?.committed.get(o.partition) ?? null;
      const rate =
        windowSeconds !== null && committed !== null && before !== null && committed >= before
          ? (committed - before) / windowSeconds
          : null;
      const owner = owners.get(o.partition)?.[0] ?? null;
      return {
        partition: o.partition,
        memberId: owner?.memberId ?? null,
        clientId: owner?.clientId ?? null,
        committedOffset: committed,
        startOffset: o.low,
        endOffset: o.high,
        lag,
        processedPerSecond: rate === null ? null : round2(rate),
      };
    });
  const byPartition = new Map(partitions.map((p) => [p.partition, p]));

  const members: ConsumerMember[] = group.members
    .map((m) => {
      const mine = m.partitions.map((p) => byPartition.get(p)).filter((p): p is ConsumerPartition => p !== undefined);
      const rates = mine.map((p) => p.processedPerSecond).filter((r): r is number => r !== null);
      return {
        memberId: m.memberId,
        clientId: m.clientId,
        replica: replicaOfClientId(m.clientId),
        host: m.host,
        partitions: m.partitions,
        lag: mine.reduce((a, p) => a + p.lag, 0),
        processedPerSecond: rates.length === 0 ? null : round2(rates.reduce((a, b) => a + b, 0)),
      };
    })
    .sort(
      (a, b) => (a.partitions[0] ?? Infinity) - (b.partitions[0] ?? Infinity) || a.clientId.localeCompare(b.clientId),
    );

  return {
    groupId: group.groupId,
    state: group.state,
    protocol: group.protocol,
    members,
    partitions,
    totalLag: partitions.reduce((a, p) => a + p.lag, 0),
    unassigned: partitions.filter((p) => !owners.has(p.partition)).map((p) => p.partition),
    overlapping: [...owners]
      .filter(([, ms]) => ms.length > 1)
      .map(([p]) => p)
      .sort((a, b) => a - b),
    rateWindowSeconds: windowSeconds === null ? null : round2(windowSeconds),
  };
}

/**
 * Messages of a partition a group has not consumed: high watermark − max(committed, log start).
 * A commit that retention has passed (committed < log start) counts only what is still in the log —
 * the records before the log start are gone, a consumer resumes at the log start (auto.offset.reset)
 * — so no phantom lag; never committed (`null`, Kafka's −1) = the whole retained log.
 */
export function partitionLag(o: Pick<PartitionOffsets, "low" | "high">, committed: number | null): number {
  return Math.max(0, o.high - Math.max(committed ?? o.low, o.low));
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/**
 * The observations rates are measured against, per key (a group on a topic): a rate always ends at
 * the current observation and starts at the latest earlier one at least `minWindowMs` old.
 */
export class RateHistory {
  private readonly states = new Map<string, { anchor: OffsetObservation; last: OffsetObservation | null }>();

  constructor(private readonly minWindowMs: number) {}

  /** The observation to compare `now` with: the anchor once it is at least `minWindowMs` old. */
  previous(key: string, now: OffsetObservation): OffsetObservation | null {
    const st = this.states.get(key);
    if (!st) {
      this.states.set(key, { anchor: now, last: null });
      return null;
    }
    if (now.at - st.anchor.at >= this.minWindowMs) {
      st.last = st.anchor;
      st.anchor = now;
    }
    return st.last;
  }
}
