/**
 * The anti-patterns of spec §9 and §10, each run until it shows its failure: a second push, a
 * legitimate event swallowed as a "duplicate", a message lost silently.
 */
import type { Message } from "@/server/dedup";
import { CORRELATION_ID_KEY } from "@/names/dedup";
import { HOUR_MS } from "@/names/keys";
import { FAST_RETRY, type ReplicaSetup } from "./scenario-context";
import {
  correct,
  eq,
  every,
  firstReplicaHandles,
  gt,
  gte,
  LEASE_DEDUP,
  NO_LOSS,
  ofKind,
  oneReplicaRun,
  type ScenarioDefinition,
  settled,
  specStack,
  successorSettles,
} from "./scenario-kit";

/** Each run's messages, reviews or chains (the expected values refer to them). */
const RUN = { noDedup: 30, reviews: 10, chains: 10, shortTtl: 20, cache: 60, beforeRetry: 20, naive: 24 } as const;

/** The anti-pattern scenarios, in presentation order. */
export const ANTI_PATTERN_SCENARIOS: readonly ScenarioDefinition[] = ofKind("anti-pattern", [
  {
    name: "anti-no-dedup",
    title: "Anti-pattern: no dedup, handler not idempotent",
    explanation:
      "No Deduplicator, and a handler that pushes first and saves afterwards. When saving fails after the push, Retry runs the handler again and the user gets a second push.",
    specSections: "§9.1",
    expected: {
      summary: "duplicate pushes (duplicateSideEffects > 0)",
      checks: [
        gt("duplicateSideEffects", 0, "each retried message was pushed again"),
        eq("deduplicated", 0, "there is no Deduplicator"),
        NO_LOSS,
      ],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await oneReplicaRun(
        ctx,
        {
          stack: specStack(null),
          behaviour: { idempotent: false, failAfterPush: (m, attempt) => every(3)(m) && attempt === 1 },
        },
        RUN.noDedup,
      );
    },
  },
  {
    name: "anti-business-key",
    title: "Anti-pattern: dedup by business key",
    explanation:
      "The key is user:<id>:event:review.updated:ref:<review> instead of the event id. Each review is legitimately updated twice (two events, two UUIDs); the second update has the same business key and is swallowed as a 'duplicate' — a lost event. A window per business key on purpose is a rate limiter, a different feature. (Here the stack swallows payload conflicts to show the loss; by default the payload fingerprint catches the second update as a conflict and sends it to the DLQ.)",
    specSections: "§2, §9.2",
    expected: {
      summary: "second legitimate updates swallowed (lost > 0)",
      checks: [
        gte("lost", RUN.reviews, "the second update of each review was swallowed"),
        gte("deduplicated", RUN.reviews, "distinct events shared a key"),
      ],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      const businessKey = (m: Message) => {
        const p = JSON.parse(Buffer.from(m.payload).toString("utf8")) as { userId: string; reviewId: string };
        return `user:${p.userId}:event:review.updated:ref:${p.reviewId}`;
      };
      await ctx.startReplica(
        "replica-1",
        correct({
          stack: specStack({ ttlMs: HOUR_MS, leaseMs: 10_000, keyFactory: businessKey, onPayloadConflict: "swallow" }),
        }),
      );
      for (let round = 0; round < 2; round++) {
        for (let r = 0; r < RUN.reviews; r++)
          await ctx.publish(1, {
            eventType: "review.updated",
            fields: { userId: `u${r}`, reviewId: `rev${r}`, rating: 3 + round },
          });
        await ctx.settle(200, 20_000);
      }
      await settled(ctx);
    },
  },
  {
    name: "anti-correlation-id",
    title: "Anti-pattern: dedup by Correlation-Id",
    explanation:
      "The key is the Correlation-Id, which one HTTP request shares with every event it causes. Of each chain of three events, the first is processed and the other two are swallowed. (Here the stack swallows payload conflicts to show the loss; by default the payload fingerprint catches them and sends them to the DLQ.)",
    specSections: "§6",
    expected: {
      summary: "chain events swallowed (lost = 2 of every 3)",
      checks: [
        gte("lost", RUN.chains * 2, "the 2nd and 3rd event of each chain were swallowed"),
        gte("deduplicated", RUN.chains * 2, "distinct events shared a key"),
      ],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      const byCorrelation = (m: Message) => m.metadata[CORRELATION_ID_KEY] ?? "";
      await ctx.startReplica(
        "replica-1",
        correct({
          stack: specStack({
            ttlMs: HOUR_MS,
            leaseMs: 10_000,
            keyFactory: byCorrelation,
            onPayloadConflict: "swallow",
          }),
        }),
      );
      for (let c = 0; c < RUN.chains; c++) {
        const correlationId = `req-${ctx.runId}-${c}`;
        await ctx.publish(1, { eventType: "review.created", correlationId });
        await ctx.publish(1, { eventType: "review.rating-updated", correlationId });
        await ctx.publish(1, { eventType: "user.notified", correlationId });
      }
      await settled(ctx);
    },
  },
  {
    name: "anti-short-ttl",
    title: "Anti-pattern: a window shorter than the repeats",
    explanation:
      "A 5-minute TTL, compressed here to 1.5 s, with a handler that is not idempotent itself. A repeat inside the window is swallowed; the forwarder's repeat 3 s later finds no key and the push goes out twice. The lint flags any TTL under 10 minutes as an error.",
    specSections: "§3, §9.3",
    expected: {
      summary: "repeats after the window processed twice (duplicateSideEffects > 0)",
      checks: [
        gte("duplicateSideEffects", RUN.shortTtl / 2, "repeats after the window were processed again"),
        gt("deduplicated", 0, "repeats inside the window were still caught"),
        NO_LOSS,
      ],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await ctx.startReplica("replica-1", {
        stack: specStack({ ttlMs: 1500, leaseMs: 1500, marking: "lease" }),
        behaviour: { idempotent: false },
      });
      // The repeats inside the window follow their originals closely, whatever the run's pace.
      const first = await ctx.publish(4);
      ctx.republishLater(first, 200);
      const ids = [...first, ...(await ctx.publish(RUN.shortTtl - 4))];
      ctx.republishLater(ids, 3500);
      await settled(ctx);
    },
  },
  {
    name: "anti-in-process-cache",
    title: "Anti-pattern: an in-process cache instead of Redis",
    explanation:
      "Each replica remembers processed UUIDs in its own memory. Replica 1 has consumed everything (offsets not yet committed) when replica 2 joins; the rebalance hands half of the partitions to replica 2, whose map is empty: it processes those messages again, and the non-idempotent handler pushes twice.",
    specSections: "§2, §9.4",
    expected: {
      summary: "processed twice after the rebalance (duplicateSideEffects > 0)",
      checks: [gt("duplicateSideEffects", 0, "the new owner's empty map let the re-read messages through"), NO_LOSS],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      const setup = (): ReplicaSetup => ({
        stack: specStack(LEASE_DEDUP),
        behaviour: { idempotent: false },
        repository: ctx.env.localRepository(),
        subscriber: { commitIntervalMs: 10_000 },
      });
      await firstReplicaHandles(ctx, setup(), RUN.cache);
      await successorSettles(ctx, setup());
    },
  },
  {
    name: "anti-dedup-before-retry",
    title: "Anti-pattern: Deduplicator outside PoisonQueue and Retry",
    explanation:
      "The Deduplicator sits outside PoisonQueue and Retry. While a downstream is down, every fourth message exhausts its retries and PoisonQueue acks it into the DLQ — which the Deduplicator takes as success and marks done. Once the downstream is back, the DLQ is replayed: every replay is swallowed as a duplicate, so those messages are never processed (spec §10).",
    specSections: "§9.6, §10",
    expected: {
      summary: "the DLQ replay is swallowed (lost > 0)",
      checks: [
        gte("lost", RUN.beforeRetry / 4, "the replayed messages were swallowed"),
        gte("deduplicated", RUN.beforeRetry / 4, "the replays hit keys marked done"),
        eq("dlq", 0, "everything in the DLQ was replayed"),
      ],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      let downstreamUp = false;
      await ctx.startReplica("replica-1", {
        stack: { order: "dedup-outside", retry: { ...FAST_RETRY, maxRetries: 2 }, dedup: LEASE_DEDUP },
        behaviour: { idempotent: true, failBeforePush: (m) => !downstreamUp && every(4)(m) },
      });
      await ctx.publish(RUN.beforeRetry);
      await settled(ctx);
      downstreamUp = true;
      await ctx.replayDlq();
      await settled(ctx);
    },
  },
  {
    name: "anti-naive-marking",
    title: "Anti-pattern: the note's marking (never released)",
    explanation:
      "The note's order (Deduplicator inside Retry) with Watermill's marking: the key is set before the handler runs and never removed. Every fourth message fails its first attempt; the retry finds the key and is swallowed as a 'duplicate'. The message is acked unprocessed and is not in the DLQ: lost.",
    specSections: "§10",
    expected: {
      summary: "failed first attempts lost (lost > 0, dlq 0)",
      checks: [
        gte("lost", RUN.naive / 4, "each retried message was swallowed"),
        eq("dlq", 0, "nothing reached the DLQ: the loss is silent"),
      ],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await oneReplicaRun(
        ctx,
        {
          stack: specStack({ ttlMs: HOUR_MS, marking: "naive" }),
          behaviour: { idempotent: true, failBeforePush: (m, attempt) => every(4)(m) && attempt === 1 },
        },
        RUN.naive,
      );
    },
  },
]);
