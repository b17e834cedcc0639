/**
 * An in-process stand-in for Kafka for the embedded mode: partitioned topics of Watermill-encoded
 * records, consumer groups with committed offsets, and rebalances when members join or leave.
 * Unlike the library's `MemoryPubSub` (one subscription = one group, no partitions) it reproduces
 * the duplicate sources of spec §1 by the same mechanisms as Kafka: an acked-but-uncommitted tail is
 * re-read after a rebalance, and a replica that crashes before its commit leaves its messages to the
 * next owner. **Single process; not durable.**
 */
import type { Message, Publisher } from "@/server/dedup";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import {
  MemoryGroupSubscriber,
  type Group,
  type GroupBroker,
  type MemorySubscriberOptions,
} from "./memory-group-subscriber";
import { NO_UUID } from "./partition-pump";
import { encodeRecord } from "./watermill-codec";

/** One stored record. */
export interface MemoryRecord {
  headers: Record<string, string>;
  value: Buffer;
  /** Epoch ms of the append (set by {@link MemoryBroker.produce}). */
  timestamp?: number;
}

/** The embedded broker. Create topics, then hand out publishers and group subscribers. */
export class MemoryBroker implements GroupBroker {
  private readonly topics = new Map<string, MemoryRecord[][]>();
  private readonly groups = new Map<string, Group>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private rr = 0;
  /** Closed brokers refuse new work. */
  private closed = false;

  /** Creates `name` with `partitions` partitions (no-op if it exists). */
  createTopic(name: string, partitions = 1): void {
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > 1000)
      throw new RangeError("MemoryBroker.createTopic: partitions must be an integer in [1, 1000]");
    if (!this.topics.has(name))
      this.topics.set(
        name,
        Array.from({ length: partitions }, () => []),
      );
  }

  /** Deletes topics and the groups' offsets on them. */
  deleteTopic(name: string): void {
    this.topics.delete(name);
    for (const g of this.groups.values())
      for (const k of [...g.committed.keys()]) if (k.startsWith(`${name}\u0000`)) g.committed.delete(k);
  }

  /** Number of partitions of a topic (0 if absent). */
  partitionCount(topic: string): number {
    return this.topics.get(topic)?.length ?? 0;
  }

  /** Appends a raw record (any headers: e.g. one without a UUID header) to a partition (default: round robin); returns where. */
  produce(topic: string, rec: MemoryRecord, partition?: number): { partition: number; offset: string } {
    if (this.closed) throw new Error("MemoryBroker: produce after close()");
    const parts = this.topics.get(topic);
    if (!parts)
      throw new Error(`MemoryBroker: topic ${topic} does not exist (create it first, as Kafka would refuse too)`);
    const p = partition ?? this.rr++ % parts.length;
    const list = parts[p];
    if (!list) throw new RangeError(`MemoryBroker.produce: partition ${p} out of range`);
    list.push({ headers: { ...rec.headers }, value: rec.value, timestamp: Date.now() });
    this.wake(topic);
    return { partition: p, offset: String(list.length - 1) };
  }

  /** Every record of a topic, in partition then offset order. */
  records(topic: string): MemoryRecord[] {
    return (this.topics.get(topic) ?? []).flat();
  }

  /**
   * A `Publisher` writing Watermill-encoded records, round robin over partitions (Watermill's
   * default: no key; the embedded records keep none), with `publishAt` saying where one landed (a
   * re-drive records it).
   */
  publisher(): Publisher & { publishAt(topic: string, msg: Message): Promise<{ partition: number; offset: string }> } {
    const write = (topic: string, m: Message) => {
      const rec = encodeRecord(m);
      if (m.uuid === NO_UUID) delete rec.headers[WATERMILL_UUID_HEADER];
      return this.produce(topic, rec);
    };
    return {
      publish: async (topic: string, ...msgs: Message[]) => {
        for (const m of msgs) write(topic, m);
      },
      publishAt: async (topic: string, m: Message) => write(topic, m),
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
      for (const m of live) for (const p of m.partitions) m.sub.startPump(g, m, p);
    });
    return g.rebalancing;
  }
}
