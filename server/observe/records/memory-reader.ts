/**
 * The embedded mode's record log: the same {@link LogReader} as Kafka's over the in-process broker
 * that holds the demo's topics (server/transport/memory-broker.ts), so the message view, the UUID
 * lookup, the DLQ page and its re-drive work without Kafka. The runtime registers its broker
 * ({@link registerEmbeddedLog}); the record routes read it only when `KAFKA_BROKERS` is not set.
 */
import type { Publisher } from "@/server/dedup";
import { TopicMissingError, type LogReader, type PartitionRange, type RawRecord } from "./log-reader";

/** A stored record of the embedded broker: Watermill headers, the payload, its append time. */
export interface EmbeddedRecord {
  headers: Record<string, string>;
  value: Buffer;
  /** Epoch ms when the broker appended it. */
  timestamp?: number;
}

/** What the reader needs of the embedded broker (`MemoryBroker` has it). */
export interface EmbeddedLog {
  /** Partitions of a topic, 0 when it does not exist. */
  partitionCount(topic: string): number;
  /** A partition's records; the index is the offset (the embedded broker never deletes records). */
  partitionRecords(topic: string, partition: number): readonly EmbeddedRecord[];
  /** A publisher writing Watermill-encoded records (the re-drive's). */
  publisher(): Publisher;
}

/**
 * Most records one fetch returns. A Kafka fetch is bounded by bytes only; in memory a 1 MiB fetch
 * of small records copies thousands a scan window (500) then drops.
 */
export const MEMORY_FETCH_MAX_RECORDS = 1000;

/** Bytes of one stored record as a fetch counts them (payload and headers). */
function storedSize(r: EmbeddedRecord): number {
  let n = r.value.length;
  for (const [k, v] of Object.entries(r.headers)) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}

/** {@link LogReader} over an {@link EmbeddedLog}: offsets are indexes, the log start is 0, records have no key. */
export class MemoryLogReader implements LogReader {
  constructor(private readonly log: EmbeddedLog) {}

  async ranges(topic: string): Promise<PartitionRange[]> {
    const n = this.log.partitionCount(topic);
    if (n === 0) throw new TopicMissingError(topic);
    return Array.from({ length: n }, (_, partition) => ({
      partition,
      low: 0n,
      high: BigInt(this.log.partitionRecords(topic, partition).length),
    }));
  }

  async fetchFrom(topic: string, partition: number, offset: bigint, maxBytes: number): Promise<RawRecord[]> {
    // Each fetch yields to the event loop, as a network fetch would: a bounded scan of 20,000
    // records (~0.1–0.3 s) does not hold up the demo consumer and the other requests in one block.
    await new Promise<void>((r) => setImmediate(r));
    if (this.log.partitionCount(topic) === 0) throw new TopicMissingError(topic);
    const recs = this.log.partitionRecords(topic, partition);
    const out: RawRecord[] = [];
    let bytes = 0;
    // Like a Kafka fetch: at least one record, then as many as fit in maxBytes.
    for (
      let i = Number(offset);
      i < recs.length && out.length < MEMORY_FETCH_MAX_RECORDS && (out.length === 0 || bytes < maxBytes);
      i++
    ) {
      const r = recs[i]!;
      bytes += storedSize(r);
      out.push({
        topic,
        partition,
        offset: BigInt(i),
        timestamp: r.timestamp ?? 0,
        key: null,
        value: r.value,
        headers: { ...r.headers },
      });
    }
    return out;
  }

  async close(): Promise<void> {}
}

type G = typeof globalThis & { __dedupHealthEmbeddedLog?: EmbeddedLog };

/** Registers the embedded broker whose topics the record views read (the runtime does it in embedded mode); `null` forgets it. */
export function registerEmbeddedLog(log: EmbeddedLog | null): void {
  if (log) (globalThis as G).__dedupHealthEmbeddedLog = log;
  else delete (globalThis as G).__dedupHealthEmbeddedLog;
}

/** The registered embedded broker, if any (kept on `globalThis`: route bundles and instrumentation share it). */
export function embeddedLog(): EmbeddedLog | undefined {
  return (globalThis as G).__dedupHealthEmbeddedLog;
}
