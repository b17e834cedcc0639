/**
 * A Redis outage while traffic flows, with each failure mode of spec §4: fail-open keeps consuming
 * and leaves the repeats to the handler's own idempotency; fail-closed retries and sends what
 * outlasts the retries to the DLQ. Neither loses a message or pushes twice.
 */
import { failClosed, failOpen, FaultyRepository } from "@/server/dedup";
import { FAST_RETRY } from "./scenario-context";
import {
  correct,
  eq,
  firstReplicaHandles,
  gt,
  LEASE_DEDUP,
  NO_DUP,
  NO_LOSS,
  ofKind,
  type ScenarioDefinition,
  settled,
  specStack,
} from "./scenario-kit";

/** The run's messages (the expected values refer to them): a third before, during and after the outage. */
const RUN = { outage: 60 } as const;

/** The Redis-outage scenarios, in presentation order. */
export const REDIS_OUTAGE_SCENARIOS: readonly ScenarioDefinition[] = ofKind("redis-outage", [
  {
    name: "redis-outage-fail-open",
    title: "Redis outage, fail-open",
    explanation:
      "Redis refuses connections for about a second while traffic flows and the forwarder re-sends some events. Fail-open lets every message through unchecked: the service keeps consuming, and the repeats that arrive meanwhile reach the handler — whose own idempotency (INSERT … ON CONFLICT DO NOTHING) stops them.",
    specSections: "§4, §5",
    expected: {
      summary: "lost 0, dlq 0, duplicateSideEffects 0; repeats reached the handler and were stopped there",
      checks: [
        NO_LOSS,
        NO_DUP,
        eq("dlq", 0, "fail-open never fails a message because of Redis"),
        eq("sideEffects", RUN.outage, "one push per message"),
        gt("handlerCalls", RUN.outage, "repeats passed the Deduplicator during the outage"),
      ],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      const faulty = new FaultyRepository(ctx.repository);
      const first = await firstReplicaHandles(ctx, correct({ repository: failOpen(faulty) }), RUN.outage / 3);
      faulty.set({ errorRate: 1 });
      ctx.republishLater(
        first.filter((_, i) => i % 2 === 0),
        0,
      );
      const during = ctx.publishOverTime(RUN.outage / 3, 40);
      await ctx.sleep(600);
      await during;
      await ctx.until(() => ctx.probe.succeeded.size >= (2 * RUN.outage) / 3, 20_000);
      faulty.set({ errorRate: 0 });
      await ctx.publish(RUN.outage / 3);
      await settled(ctx);
    },
  },
  {
    name: "redis-outage-fail-closed",
    title: "Redis outage, fail-closed",
    explanation:
      "The same outage with fail-closed, the choice for handlers where a duplicate costs money: a Redis error becomes the handler's error, Retry tries again, and what outlasts the retry budget goes to the DLQ — nothing is processed unchecked and nothing is lost.",
    specSections: "§4",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, messages that outlasted the retries in the DLQ",
      checks: [NO_LOSS, NO_DUP, gt("dlq", 0, "the outage outlasted the retry budget of some messages")],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      const faulty = new FaultyRepository(ctx.repository);
      const retryShort = { ...FAST_RETRY, maxRetries: 3, maxIntervalMs: 150 };
      await ctx.startReplica(
        "replica-1",
        correct({ repository: failClosed(faulty), stack: specStack(LEASE_DEDUP, retryShort) }),
      );
      await ctx.publish(10);
      await ctx.until(() => ctx.probe.succeeded.size >= 10, 30_000);
      faulty.set({ errorRate: 1 });
      await ctx.publish(20);
      await ctx.until(() => ctx.probe.inDlq.size >= 3, 20_000);
      await ctx.sleep(1200);
      faulty.set({ errorRate: 0 });
      await ctx.publish(10);
      await settled(ctx);
    },
  },
]);
