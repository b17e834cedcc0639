/**
 * Reads records of a Kafka topic at chosen offsets **without a consumer group**: the dashboard
 * looking at a record must never commit an offset, join a group or trigger a rebalance of the
 * consumers it observes.
 *
 * kafkajs has no `assign()`: its `Consumer` always joins a group (even with a throw-away groupId,
 * `seek` works only after the join). So this uses the client's own `Cluster` — the object its
 * consumer and admin are built on — and sends Fetch requests straight to each partition's leader
 * (`broker.fetch`), and ListOffsets through `cluster.fetchTopicsOffset`. kafkajs does not export
 * the Cluster; it is made with the `Kafka` instance's private factory (same brokers, logger and
 * retry as the client), found by its symbol's description. **Tied to kafkajs 2.x internals**:
 * {@link KafkaLogReader} fails with a message naming kafkajs when the factory is not there.
 */
import { Kafka, logLevel } from "kafkajs";
import { kafkaLogCreator } from "@/server/transport/kafka-log";
import { SharedConnection } from "@/server/transport/shared-connection";
import { TopicMissingError, type LogReader, type PartitionRange, type RawRecord } from "./log-reader";

interface FetchedMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: RawRecord["headers"];
  isControlRecord?: boolean;
}

interface KjsBroker {
  fetch(req: {
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>;
  }): Promise<{
    responses: Array<{ topicName: string; partitions: Array<{ partition: number; messages: FetchedMessage[] }> }>;
  }>;
}

interface KjsCluster {
  readonly targetTopics?: Set<string>;
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  findTopicPartitionMetadata(topic: string): Array<{ partitionId: number }>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(q: { nodeId: string }): Promise<KjsBroker>;
  fetchTopicsOffset(
    topics: Array<{ topic: string; partitions: Array<{ partition: number }>; fromBeginning: boolean }>,
  ): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
}

function clusterOf(kafka: Kafka): KjsCluster {
  const sym = Object.getOwnPropertySymbols(kafka).find((s) => s.description === "private:Kafka:createCluster");
  const create = sym ? (kafka as unknown as Record<symbol, unknown>)[sym] : undefined;
  if (typeof create !== "function")
    throw new Error(
      "records: this kafkajs version has no private Cluster factory (expected kafkajs 2.x); the record reader cannot fetch without a consumer group",
    );
  return create({ allowAutoTopicCreation: false, metadataMaxAge: 60_000 }) as KjsCluster;
}

/** Reads partitions of topics by offset; one connection to the cluster, reused. */
export class KafkaLogReader implements LogReader {
  private readonly kafka: Kafka;
  private readonly cluster = new SharedConnection(async () => {
    const c = clusterOf(this.kafka);
    await c.connect();
    return c;
  });
  /** Per connected cluster: each topic's metadata load, shared by concurrent readers of that topic. */
  private loading = new WeakMap<KjsCluster, Map<string, Promise<void>>>();

  constructor(brokers: readonly string[]) {
    this.kafka = new Kafka({
      clientId: "dedup-health-records",
      brokers: [...brokers],
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator,
      connectionTimeout: 2000,
      requestTimeout: 5000,
      retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
    });
  }

  private connected(): Promise<KjsCluster> {
    return this.cluster.get();
  }

  /**
   * The cluster with `topic`'s metadata loaded. A topic the broker does not know stays out of the
   * cluster's target topics (kafkajs would otherwise fail every later metadata refresh on it).
   */
  private async withTopic(topic: string): Promise<KjsCluster> {
    const c = await this.connected();
    let loads = this.loading.get(c);
    if (!loads) this.loading.set(c, (loads = new Map()));
    // One load per topic: a second reader that found the topic among the targets before its metadata
    // arrived got kafkajs' "Topic metadata not loaded" (a 503 under concurrent requests).
    let load = loads.get(topic);
    if (!load) {
      const mine = loads;
      load = c.addTargetTopic(topic).then(
        () => undefined,
        (e: unknown) => {
          mine.delete(topic);
          c.targetTopics?.delete(topic);
          if ((e as { type?: unknown }).type === "UNKNOWN_TOPIC_OR_PARTITION") throw new TopicMissingError(topic);
          throw e;
        },
      );
      loads.set(topic, load);
    }
    await load;
    return c;
  }

  /** Partitions of `topic` with their low and high offsets; throws {@link TopicMissingError}. */
  async ranges(topic: string): Promise<PartitionRange[]> {
    const c = await this.withTopic(topic);
    const partitions = c.findTopicPartitionMetadata(topic).map((p) => ({ partition: p.partitionId }));
    if (partitions.length === 0) return [];
    const [lows, highs] = await Promise.all(
      [true, false].map((fromBeginning) => c.fetchTopicsOffset([{ topic, partitions, fromBeginning }])),
    );
    const low = new Map((lows?.[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
    return (highs?.[0]?.partitions ?? [])
      .map((p) => ({ partition: p.partition, low: low.get(p.partition) ?? 0n, high: BigInt(p.offset) }))
      .sort((a, b) => a.partition - b.partition);
  }

  /**
   * Records of `topic`/`partition` from `offset` on, as much as one Fetch of at most `maxBytes`
   * returns (at least one record when there is one: Kafka returns a first batch larger than the
   * limit whole). Control records (transaction markers) are left out.
   */
  async fetchFrom(topic: string, partition: number, offset: bigint, maxBytes: number): Promise<RawRecord[]> {
    const c = await this.withTopic(topic);
    const leaders = c.findLeaderForPartitions(topic, [partition]);
    const nodeId = Object.keys(leaders)[0];
    if (nodeId === undefined) return [];
    const broker = await c.findBroker({ nodeId });
    const res = await broker.fetch({
      maxWaitTime: 0,
      minBytes: 1,
      maxBytes,
      topics: [{ topic, partitions: [{ partition, fetchOffset: offset.toString(), maxBytes }] }],
    });
    const out: RawRecord[] = [];
    for (const t of res.responses) {
      for (const p of t.partitions) {
        for (const m of p.messages) {
          const at = BigInt(m.offset);
          // A fetch answers from the start of the batch that holds `offset`: earlier records are dropped here.
          if (at < offset || m.isControlRecord) continue;
          out.push({
            topic,
            partition,
            offset: at,
            timestamp: Number(m.timestamp),
            key: m.key,
            value: m.value,
            headers: m.headers ?? {},
          });
        }
      }
    }
    return out;
  }

  /** Closes the connection (a later call connects again). */
  async close(): Promise<void> {
    const c = this.cluster.take();
    if (c) await c.then((x) => x.disconnect()).catch(() => undefined);
  }
}
