/**
 * Kafka transactions under the crash storm: the same Kafka-to-Kafka handler as the Redis rig, in
 * the subscriber's transactions mode — each chunk's outputs and consumed offsets commit in one
 * transaction of the partition's transactional producer. A replica that dies after sending an
 * output leaves its transaction open; the partition's next owner fences it (the broker aborts it),
 * so a `read_committed` consumer never sees that output, and the chunk's re-run sends it once. No
 * Deduplicator: a `done` mark written before an aborted commit would swallow the re-run and lose
 * the output. Real Kafka only: the embedded broker has no transactions.
 */
import { logLevel } from "kafkajs";
import { newMessage } from "@/server/dedup";
import { KafkaTransport } from "@/server/transport";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { countOutputs, outputUuid, type GuaranteeSpec } from "./rig";
import { afterEffect, startReplica, STORM, stormExtras } from "./storm";

/** Kafka transactions, or why they cannot run: the embedded broker has none. */
export const TRANSACTIONS_GUARANTEE: GuaranteeSpec = {
  guarantee: "transactions",
  setup: () => "Kafka transactions: each chunk's outputs and consumed offsets in one transaction; one output per event",
  async open(ctx, reads) {
    const transport = ctx.env.transport;
    if (!(transport instanceof KafkaTransport))
      return { notRun: "the embedded broker has no Kafka transactions (set KAFKA_BROKERS for real Kafka)" };
    const out = `${ctx.topic}.out-tx`;
    const groupId = `${ctx.groupId}.tx`;
    const handlerName = `${ctx.scenario}.transactions`;
    await transport.createTopics([{ name: out, partitions: 1 }]);
    return {
      short: "tx",
      async startReplica(life, probe) {
        const subscriber = new KafkaSubscriber({
          brokers: transport.brokers,
          groupId,
          replica: life.name,
          handler: handlerName,
          chunkSize: STORM.chunkSize,
          nackDelayMs: 50,
          transactions: true,
          beforeCommit: life.beforeCommit,
          dlq: { publisher: ctx.publisher, topic: ctx.dlqTopic },
          // A fenced producer of a crashed replica is the expected end of its transaction, not an error to log.
          logLevel: logLevel.NOTHING,
        });
        const extras = stormExtras(life, probe);
        return startReplica(life, {
          handlerName,
          topic: ctx.topic,
          subscriber,
          middleware: [...extras.outermost, ...extras.beforeDedup],
          handler: probe.wrapHandler(async (msg) => {
            if (life.dead) return;
            await subscriber.transactionalPublisher.publish(out, newMessage(outputUuid(msg.uuid), msg.payload));
            afterEffect(life, probe, msg, "its transaction committed");
          }),
        });
      },
      committed: () => reads.committed(groupId, ctx.topic),
      inputRecords: () => reads.records(ctx.topic),
      count: async () => ({
        counts: countOutputs(await reads.committedUuids(out)),
        countedBy: `records on ${out}, read by a read_committed consumer (aborted transactions hidden)`,
      }),
      cleanup: async () => {
        await reads.deleteGroups([groupId]);
        await transport.deleteTopics([out]);
      },
    };
  },
};
