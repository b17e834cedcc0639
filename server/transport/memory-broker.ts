/**
 * An in-process stand-in for Kafka for the embedded mode: partitioned topics of Watermill-encoded
 * records, consumer groups with committed offsets, and rebalances when members join or leave.
 * Unlike the library's `MemoryPubSub` (one subscription = one group, no partitions) it reproduces
 * the duplicate sources of spec §1 by the same mechanisms as Kafka: an acked-but-uncommitted tail is
 * re-read after a rebalance, and a replica that crashes before its commit leaves its messages to the
 * next owner. **Single process; not durable.**
 */
import { randomBytes } from "node:crypto";
import type { Message } from "@/server/dedup/message";
import type { MessageSink, Publisher, Subscriber, Subscription } from "@/server/dedup/pubsub";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { NO_UUID, pumpPartition, type SubscriberOptions } from "./partition-pump";
import { encodeRecord } from "./watermill-codec";

/** One stored record. */
export interface MemoryRecord {
  headers: Record<string, string>;
  value: Buffer;
  /** Epoch ms of the append (set by {@link MemoryBroker.produce}). */
  timestamp?: number;
}

interface Member {
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

interface Group {
  committed: Map<string, number>;
  members: Member[];
  generation: number;
  rebalancing: Promise<void>;
}

/** The embedded broker. Create topics, then hand out publishers and group subscribers. */
export class MemoryBroker {
  private readonly topics = new Map<string, MemoryRecord[][]>();
  private readonly groups = new Map<string, Group>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private rr = 0;
  /** Closed brokers refuse new work. */
  private closed = false;

  /** Creates `name` with `partitions` partitions (no-op if it exists). */
  createTopic(name: string, partitions = 1): void {
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > 1000) throw new RangeError("MemoryBroker.createTopic: partitions must be an integer in [1, 1000]");
    if (!this.topics.has(name)) this.topics.set(name, Array.from({ length: partitions }, () => []));
  }

  /** Deletes topics and the groups' offsets on them. */
  deleteTopic(name: string): void {
    this.topics.delete(name);
    for (const g of this.groups.values()) for (const k of [...g.committed.keys()]) if (k.startsWith(`${name}\u0000`)) g.committed.delete(k);
  }

  /** Number of partitions of a topic (0 if absent). */
  partitionCount(topic: string): number {
    return this.topics.get(topic)?.length ?? 0;
  }

  /** Appends a raw record (any headers: e.g. one without a UUID header) to a partition (default: round robin). */
  produce(topic: string, rec: MemoryRecord, partition?: number): void {
    if (this.closed) throw new Error("MemoryBroker: produce after close()");
    const parts = this.topics.get(topic);
    if (!parts) throw new Error(`MemoryBroker: topic ${topic} does not exist (create it first, as Kafka would refuse too)`);
    const p = partition ?? this.rr++ % parts.length;
    const list = parts[p];
    if (!list) throw new RangeError(`MemoryBroker.produce: partition ${p} out of range`);
    list.push({ headers: { ...rec.headers }, value: rec.value, timestamp: Date.now() });
    this.wake(topic);
  }

  /** Every record of a topic, in partition then offset order. */
  records(topic: string): MemoryRecord[] {
    return (this.topics.get(topic) ?? []).flat();
  }

  /** A `Publisher` writing Watermill-encoded records, round robin over partitions (Watermill's default: no key). */
  publisher(): Publisher {
    return {
      publish: async (topic: string, ...msgs: Message[]) => {
        for (const m of msgs) {
          const rec = encodeRecord(m);
          if (m.uuid === NO_UUID) delete rec.headers[WATERMILL_UUID_HEADER];
          this.produce(topic, rec);
        }
      },
      close: async () => undefined,
    };
  }

  /** A group subscriber (one replica). */
  subscriber(options: MemorySubscriberOptions): MemoryGroupSubscriber {
    return new MemoryGroupSubscriber(this, options);
  }

  /** Stops everything. */
  async close(): Promise<void> {
    this.closed = true;
    for (const g of this.groups.values()) for (const m of g.members) m.gone = true;
    for (const t of this.waiters.keys()) this.wake(t);
  }

  // --- internals used by MemoryGroupSubscriber -------------------------------------------------

  /** @internal */
  group(id: string): Group {
    let g = this.groups.get(id);
    if (!g) {
      g = { committed: new Map(), members: [], generation: 0, rebalancing: Promise.resolve() };
      this.groups.set(id, g);
    }
    return g;
  }

  /** @internal Waits for a record on `topic` or `ms`. */
  waitForData(topic: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(topic) ?? new Set();
      this.waiters.set(topic, set);
      const done = () => {
        clearTimeout(t);
        set.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      set.add(done);
    });
  }

  /** @internal */
  partitionRecords(topic: string, partition: number): MemoryRecord[] {
    return this.topics.get(topic)?.[partition] ?? [];
  }

  private wake(topic: string): void {
    for (const w of [...(this.waiters.get(topic) ?? [])]) w();
  }

  /** @internal Rebalance: waits for every member's in-flight chunk, then assigns partitions round robin. */
  rebalance(groupId: string, topic: string): Promise<void> {
    const g = this.group(groupId);
    g.rebalancing = g.rebalancing.then(async () => {
      g.generation++;
      const gen = g.generation;
      await Promise.allSettled(g.members.flatMap((m) => [...m.pumps]));
      if (gen !== g.generation) return; // a later rebalance supersedes this one
      const live = g.members.filter((m) => !m.gone && m.topic === topic);
      const n = this.partitionCount(topic);
      for (const m of live) {
        m.partitions = [];
        m.generation = gen;
        m.pending.clear();
        m.lastCommit = Date.now();
      }
      for (let p = 0; p < n && live.length > 0; p++) live[p % live.length]!.partitions.push(p);
      for (const m of live) for (const p of m.partitions) m.sub.startPump(this, groupId, g, m, p);
    });
    return g.rebalancing;
  }
}

/** Options of {@link MemoryGroupSubscriber}: the knobs every subscriber has, nothing of its own. */
export type MemorySubscriberOptions = SubscriberOptions;

/** Defaults of {@link MemorySubscriberOptions}. */
export const DEFAULT_MEMORY_SUBSCRIBER_OPTIONS = {
  chunkSize: 20,
  nackDelayMs: 50,
  commitIntervalMs: 0,
} satisfies Partial<MemorySubscriberOptions>;

/** One replica of a group on the {@link MemoryBroker}. */
export class MemoryGroupSubscriber implements Subscriber {
  readonly name = "memory";
  readonly replica: string;
  private readonly o: MemorySubscriberOptions & typeof DEFAULT_MEMORY_SUBSCRIBER_OPTIONS;
  private readonly members = new Set<Member>();
  private readonly crash = new AbortController();
  private crashedFlag = false;

  constructor(
    private readonly broker: MemoryBroker,
    options: MemorySubscriberOptions,
  ) {
    this.o = { ...DEFAULT_MEMORY_SUBSCRIBER_OPTIONS, ...options };
    if (!this.o.groupId) throw new RangeError("MemoryGroupSubscriber: groupId must be non-empty");
    if (!Number.isInteger(this.o.chunkSize) || this.o.chunkSize < 1) throw new RangeError("MemoryGroupSubscriber: chunkSize must be an integer ≥ 1");
    if (!(this.o.nackDelayMs >= 0 && this.o.nackDelayMs <= 60_000)) throw new RangeError("MemoryGroupSubscriber: nackDelayMs must be in [0, 60000]");
    if (!(this.o.commitIntervalMs >= 0 && this.o.commitIntervalMs <= 600_000)) throw new RangeError("MemoryGroupSubscriber: commitIntervalMs must be in [0, 600000]");
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
    const member: Member = { id: `${this.replica}-${randomBytes(2).toString("hex")}`, topic, sink, sub: this, partitions: [], generation: -1, pumps: new Set(), pending: new Map(), lastCommit: Date.now(), gone: false };
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
      const ticker = setInterval(() => {
        if (member.gone) return clearInterval(ticker);
        if (member.pending.size > 0 && Date.now() - member.lastCommit >= this.o.commitIntervalMs) this.flush(g, member);
      }, Math.max(50, Math.floor(this.o.commitIntervalMs / 2)));
      ticker.unref();
    }
    signal.addEventListener("abort", () => void leave(true), { once: true });
    await this.broker.rebalance(this.o.groupId, topic);
    if (signal.aborted) void leave(true);
    return { closed };
  }

  /** @internal */
  startPump(broker: MemoryBroker, _groupId: string, g: Group, m: Member, partition: number): void {
    const run = this.pump(broker, g, m, partition);
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
  private async pump(broker: MemoryBroker, g: Group, m: Member, partition: number): Promise<void> {
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
    await Promise.all(
      [...this.members].map((m) => m.leave?.(true)),
    );
  }
}
