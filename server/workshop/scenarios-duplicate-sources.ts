/**
 * The four duplicate sources of spec §1 — retry on a handler error, a consumer-group rebalance, the
 * outbox forwarder re-publishing, a restart before the offset commit — each met by the correct
 * setup: every repeat is deduplicated, nothing is lost and no push is sent twice.
 */
import {
  correct,
  eq,
  every,
  firstReplicaHandles,
  gt,
  gte,
  NO_DUP,
  NO_LOSS,
  ofKind,
  oneReplicaRun,
  quiet,
  type ScenarioDefinition,
  settled,
  successorSettles,
} from "./scenario-kit";

/** Each run's messages (the expected values refer to them); the forwarder re-sends every `forwardEvery`th. */
const RUN = { retry: 30, rebalance: 120, forward: 40, forwardEvery: 4, restart: 60 } as const;

/** The duplicate-source scenarios, in presentation order. */
export const DUPLICATE_SOURCE_SCENARIOS: readonly ScenarioDefinition[] = ofKind("duplicate-source", [
  {
    name: "retry-on-error",
    title: "Retry on a handler error",
    explanation:
      "Every third push fails twice (the provider times out) and Retry runs the handler again. The Deduplicator sits inside Retry and releases its key when an attempt fails, so each retry really runs the handler; the push is sent once per message.",
    specSections: "§1, §2, §10",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, one push per message, more handler calls than messages",
      checks: [
        NO_LOSS,
        NO_DUP,
        eq("sideEffects", RUN.retry, "one push per message"),
        gt("handlerCalls", RUN.retry, "failed attempts were retried"),
        eq("dlq", 0, "every message succeeded within the retry budget"),
      ],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await oneReplicaRun(
        ctx,
        correct({ behaviour: { idempotent: true, failBeforePush: (m, attempt) => every(3)(m) && attempt <= 2 } }),
        RUN.retry,
      );
    },
  },
  {
    name: "rebalance",
    title: "Consumer-group rebalance",
    explanation:
      "Replicas commit offsets on an interval (10 s here; kafkajs's auto-commit default is 5 s). Replica 1 has consumed everything when replicas 2 and 3 join: the rebalance hands partitions over at their last committed offset, and the acked-but-uncommitted tail is read again. The shared Redis knows those UUIDs: every re-read is swallowed.",
    specSections: "§1, §2",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, the re-read tail deduplicated",
      checks: [
        NO_LOSS,
        NO_DUP,
        eq("sideEffects", RUN.rebalance, "one push per message"),
        gt("deduplicated", 0, "the rebalance re-delivered the uncommitted tail"),
      ],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      const setup = correct({ subscriber: { commitIntervalMs: 10_000 } });
      await firstReplicaHandles(ctx, setup, RUN.rebalance);
      await ctx.startReplica("replica-2", setup);
      await ctx.startReplica("replica-3", setup);
      await ctx.settle(quiet(ctx), 30_000);
      await ctx.replicas[1]!.stop();
      await ctx.settle(quiet(ctx), 20_000);
    },
  },
  {
    name: "forwarder-republish",
    title: "Outbox forwarder re-publishes",
    explanation:
      "The outbox forwarder wrote every fourth event to Kafka but crashed before marking its outbox row; after the restart it publishes the same row again, with the same UUID. The Deduplicator recognises the UUID and acks the copy without running the handler.",
    specSections: "§1, §2",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, every re-published copy deduplicated",
      checks: [
        NO_LOSS,
        NO_DUP,
        eq("sideEffects", RUN.forward, "one push per message"),
        gte("deduplicated", RUN.forward / RUN.forwardEvery, "each re-published copy was swallowed"),
      ],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await ctx.startReplica("replica-1", correct());
      const ids = await ctx.publish(RUN.forward);
      ctx.republishLater(
        ids.filter((_, i) => i % RUN.forwardEvery === 0),
        600,
      );
      await settled(ctx);
    },
  },
  {
    name: "restart-before-commit",
    title: "Restart before the offset commit",
    explanation:
      "Replica 1 runs the handler for a batch and exits before committing the offsets. Its successor starts at the last committed offset and reads that batch again; the keys are already done in Redis, so nothing is processed twice.",
    specSections: "§1, §2",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, the re-read batch deduplicated",
      checks: [
        NO_LOSS,
        NO_DUP,
        eq("sideEffects", RUN.restart, "one push per message"),
        gt("deduplicated", 0, "the successor re-read what was handled but not committed"),
      ],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      let handled = 0;
      const crashing = correct({
        subscriber: {
          beforeCommit: (acked) => {
            handled += acked.length;
            return handled >= 10 ? "crash" : "commit";
          },
        },
      });
      const r1 = await ctx.startReplica("replica-1", crashing);
      await ctx.publish(RUN.restart);
      await ctx.until(() => r1.crashed, 30_000);
      await r1.done;
      await successorSettles(ctx, correct());
    },
  },
]);
