/**
 * One replica of a consumer group on the embedded broker (`MemoryBroker`): joins its group per topic,
 * pumps the partitions the broker's rebalance assigned it through the shared partition loop, keeps
 * its acked offsets until they are committed (at once, or every `commitIntervalMs`), and leaves
 * gracefully (commit, then rebalance) or, after a `beforeCommit` crash, without committing.
 */
import { randomBytes } from "node:crypto";
import type { MessageSink, Subscriber, Subscription } from "@/server/dedup";
import { pumpPartition, type PumpRecord, type SubscriberOptions } from "./partition-pump";

/** One subscription of a replica in its group: its assignment and the offsets it acked. */
export interface Member {
  id: string;
  topic: string;
  sink: MessageSink;
  sub: MemoryGroupSubscriber;
  partitions: number[];
  generation: number;
  pumps: Set<Promise<void>>;
  pending: Map<number, number>;
  lastCommit: number;
  gone: boolean;
  /** Leaves the group (graceful: commit pending first). */
  leave?: (graceful: boolean) => Promise<void>;
}

/** A consumer group on the embedded broker: its members, generation and committed offsets. */
export interface Group {
  committed: Map<string, number>;
  members: Member[];
  generation: number;
  rebalancing: Promise<void>;
}

/** What a replica asks of its broker (`MemoryBroker` implements it). */
export interface GroupBroker {
  partitionCount(topic: string): number;
  group(id: string): Group;
  /** Waits for every member's in-flight chunk, then assigns the topic's partitions anew. */
  rebalance(groupId: string, topic: string): Promise<void>;
  partitionRecords(topic: string, partition: number): readonly PumpRecord[];
  /** Waits for a record on `topic` or `ms`. */
  waitForData(topic: string, ms: number): Promise<void>;
}

/** Options of {@link MemoryGroupSubscriber}: the knobs every subscriber has, nothing of its own. */
export type MemorySubscriberOptions = SubscriberOptions;

/** Defaults of {@link MemorySubscriberOptions}. */
export const DEFAULT_MEMORY_SUBSCRIBER_OPTIONS = {
  chunkSize: 20,
  nackDelayMs: 50,
  commitIntervalMs: 0,
} satisfies Partial<MemorySubscriberOptions>;

/** One replica of a group on the embedded broker. */
export class MemoryGroupSubscriber implements Subscriber {
  readonly name = "memory";
  readonly replica: string;
  private readonly o: MemorySubscriberOptions & typeof DEFAULT_MEMORY_SUBSCRIBER_OPTIONS;
  private readonly members = new Set<Member>();
  private readonly crash = new AbortController();
  private crashedFlag = false;

  constructor(
    private readonly broker: GroupBroker,
    options: MemorySubscriberOptions,
  ) {
    this.o = { ...DEFAULT_MEMORY_SUBSCRIBER_OPTIONS, ...options };
    if (!this.o.groupId) throw new RangeError("MemoryGroupSubscriber: groupId must be non-empty");
    if (!Number.isInteger(this.o.chunkSize) || this.o.chunkSize < 1)
      throw new RangeError("MemoryGroupSubscriber: chunkSize must be an integer ≥ 1");
    if (!(this.o.nackDelayMs >= 0 && this.o.nackDelayMs <= 60_000))
      throw new RangeError("MemoryGroupSubscriber: nackDelayMs must be in [0, 60000]");
    if (!(this.o.commitIntervalMs >= 0 && this.o.commitIntervalMs <= 600_000))
      throw new RangeError("MemoryGroupSubscriber: commitIntervalMs must be in [0, 600000]");
    this.replica = this.o.replica ?? `r-${randomBytes(3).toString("hex")}`;
  }

  /** True once `beforeCommit` made this replica crash. */
  get crashed(): boolean {
    return this.crashedFlag;
  }

  /** Partitions currently assigned, per topic. */
  get assignment(): Map<string, number[]> {
    const m = new Map<string, number[]>();
    for (const mem of this.members) m.set(mem.topic, [...mem.partitions]);
    return m;
  }

  async subscribe(topic: string, sink: MessageSink, signal: AbortSignal): Promise<Subscription> {
    if (this.broker.partitionCount(topic) === 0) throw new Error(`MemoryBroker: topic ${topic} does not exist`);
    const g = this.broker.group(this.o.groupId);
    const member: Member = {
      id: `${this.replica}-${randomBytes(2).toString("hex")}`,
      topic,
      sink,
      sub: this,
      partitions: [],
      generation: -1,
      pumps: new Set(),
      pending: new Map(),
      lastCommit: Date.now(),
      gone: false,
    };
    this.members.add(member);
    g.members.push(member);
    let resolveClosed!: () => void;
    const closed = new Promise<void>((r) => (resolveClosed = r));
    const leave = async (graceful: boolean) => {
      if (member.gone) return;
      member.gone = true;
      await Promise.allSettled([...member.pumps]);
      if (graceful && member.generation === g.generation) this.flush(g, member);
      g.members = g.members.filter((m) => m !== member);
      this.members.delete(member);
      await this.broker.rebalance(this.o.groupId, topic);
      resolveClosed();
    };
    member.leave = leave;
    if (this.o.commitIntervalMs > 0) {
      // An idle partition's acked tail is committed too, once the interval has passed.
      const ticker = setInterval(
        () => {
          if (member.gone) return clearInterval(ticker);
          if (member.pending.size > 0 && Date.now() - member.lastCommit >= this.o.commitIntervalMs)
            this.flush(g, member);
        },
        Math.max(50, Math.floor(this.o.commitIntervalMs / 2)),
      );
      ticker.unref();
    }
    signal.addEventListener("abort", () => void leave(true), { once: true });
    await this.broker.rebalance(this.o.groupId, topic);
    if (signal.aborted) void leave(true);
    return { closed };
  }

  /** @internal */
  startPump(g: Group, m: Member, partition: number): void {
    const run = this.pump(g, m, partition);
    m.pumps.add(run);
    void run.finally(() => m.pumps.delete(run));
  }

  private flush(g: Group, m: Member): void {
    if (m.generation !== g.generation) return; // a stale member's commit is refused, as by Kafka
    for (const [p, next] of m.pending) g.committed.set(`${m.topic}\u0000${p}`, next);
    m.pending.clear();
    m.lastCommit = Date.now();
  }

  private onCrash(): void {
    if (this.crashedFlag) return;
    this.crashedFlag = true;
    this.crash.abort();
    for (const m of this.members) {
      setImmediate(() => void m.leave?.(false));
    }
  }

  /** One partition of one generation: waits for records and runs them through the shared loop. */
  private async pump(g: Group, m: Member, partition: number): Promise<void> {
    const broker = this.broker;
    const gen = m.generation;
    const alive = () => !m.gone && m.generation === gen && g.generation === gen && !this.crash.signal.aborted;
    let pos = g.committed.get(`${m.topic}\u0000${partition}`) ?? 0;
    while (alive()) {
      const recs = broker.partitionRecords(m.topic, partition);
      if (pos >= recs.length) {
        await broker.waitForData(m.topic, 100);
        continue;
      }
      await pumpPartition({
        topic: m.topic,
        partition,
        records: recs,
        start: pos,
        offsetOf: (_r, i) => String(i),
        sink: m.sink,
        options: this.o,
        subscriber: `memory/${this.replica}`,
        signal: this.crash.signal,
        deliverSingly: (chunk) => chunk.length === 1,
        halt: () => !alive(),
        ack: async (offset) => {
          pos = Number(offset) + 1;
          // The batch's deferred `done` marks land before its offsets count as committed (pubsub.ts item 3).
          if (m.sink.flush) await m.sink.flush();
          this.ack(g, m, partition, pos);
        },
        // Acks commit on their own schedule (`commitIntervalMs`, see `ack`).
        commit: async () => undefined,
        redeliver: (offset) => {
          pos = Number(offset);
        },
        onCrash: () => this.onCrash(),
      });
    }
  }

  private ack(g: Group, m: Member, partition: number, next: number): void {
    m.pending.set(partition, next);
    if (this.o.commitIntervalMs === 0 || Date.now() - m.lastCommit >= this.o.commitIntervalMs) this.flush(g, m);
  }

  async close(): Promise<void> {
    await Promise.all([...this.members].map((m) => m.leave?.(true)));
  }
}
