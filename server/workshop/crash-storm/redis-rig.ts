/**
 * The Deduplicator on Redis under the crash storm: a Kafka-to-Kafka handler that publishes one
 * output per event (a plain publisher: visible at once) inside the spec's stack with lease marking.
 * A replica that dies after the output and before the batch's `done` marks leaves `processing`
 * leases behind; once they expire its successor runs those events again and publishes their
 * outputs a second time — the documented at-least-once of docs/LIBRARY.md.
 */
import { HOUR_MS } from "@/names/keys";
import { FaultyRepository, newMessage } from "@/server/dedup";
import { buildStack } from "@/server/notification/service";
import { FAST_RETRY } from "../scenario-context";
import { countOutputs, outputUuid, type GuaranteeSpec } from "./rig";
import { afterEffect, startReplica, STORM, stormExtras } from "./storm";

/** How a dead process's store calls end: the connection is gone. */
const deadStore = () =>
  Object.assign(new Error("connection lost: the replica crashed (simulated)"), { code: "ECONNRESET" });

/** The Deduplicator on Redis (the in-process store playing Redis in embedded mode). */
export const REDIS_GUARANTEE: GuaranteeSpec = {
  guarantee: "redis",
  setup: (ctx) =>
    `Deduplicator on ${ctx.repository.kind === "redis" ? "Redis" : "the in-process store (plays Redis)"}, lease marking, ${STORM.leaseMs / 1000} s lease; one output record per event`,
  async open(ctx, reads) {
    const out = `${ctx.topic}.out-redis`;
    const groupId = `${ctx.groupId}.redis`;
    const handlerName = `${ctx.scenario}.redis`;
    const transport = ctx.env.transport;
    await transport.createTopics([{ name: out, partitions: 1 }]);
    return {
      short: "redis",
      async startReplica(life, probe) {
        // The replica's own connection to the shared store: it fails for good when the replica dies.
        const repository = new FaultyRepository(ctx.repository);
        life.onDeath(() => (repository.faults = { ...repository.faults, errorRate: 1, error: deadStore }));
        const dedup = {
          repository,
          service: ctx.env.service,
          prefix: ctx.prefix,
          registry: ctx.env.registry,
          hotKeys: null,
          ttlMs: HOUR_MS,
          leaseMs: STORM.leaseMs,
          marking: "lease" as const,
          // The dead replica's lost `done` marks are the point of the run, not a log line.
          logger: () => undefined,
        };
        const middleware = buildStack(
          { order: "spec", retry: FAST_RETRY, dedup },
          ctx.publisher,
          ctx.dlqTopic,
          stormExtras(life, probe),
        );
        const subscriber = transport.subscriber({
          groupId,
          replica: life.name,
          handler: handlerName,
          chunkSize: STORM.chunkSize,
          beforeCommit: life.beforeCommit,
          dlq: { publisher: ctx.publisher, topic: ctx.dlqTopic },
        });
        return startReplica(life, {
          handlerName,
          topic: ctx.topic,
          subscriber,
          middleware,
          handler: probe.wrapHandler(async (msg) => {
            if (life.dead) return;
            await ctx.publisher.publish(out, newMessage(outputUuid(msg.uuid), msg.payload));
            afterEffect(life, probe, msg, "its done mark");
          }),
        });
      },
      committed: () => reads.committed(groupId, ctx.topic),
      inputRecords: () => reads.records(ctx.topic),
      count: async () => ({
        counts: countOutputs(await reads.committedUuids(out)),
        countedBy: `records on ${out}, read by a ${transport.mode === "real" ? "read_committed consumer" : "reader of the embedded broker"}`,
      }),
      cleanup: async () => {
        await reads.deleteGroups([groupId]);
        await transport.deleteTopics([out]);
      },
    };
  },
};
