/**
 * The workshop scenarios (spec §1, §4, §9, §10): each a script over a {@link ScenarioContext}
 * with its expected outcome declared as data — the API shows it, the run is checked against it,
 * and the tests assert it in both modes. Time-compressed: retry backoff in tens of ms, the
 * "5-minute" TTL is 1.5 s, outages last about a second.
 */
import { failClosed, failOpen } from "@/server/dedup/failure-mode";
import { FaultyRepository } from "@/server/dedup/faulty-repository";
import { type Message } from "@/server/dedup/message";
import { CORRELATION_ID_KEY, HOUR_MS } from "@/names/dedup";
import type { CheckResult, ExpectedCheck, ExpectedOutcome, RunSummary, ScenarioKind, ScenarioName } from "@/lib/api/workshop";
import { FAST_RETRY, seqOf, type ReplicaSetup, type ScenarioContext } from "./scenario-context";

/** A scenario: what the API lists plus the script. */
export interface ScenarioDefinition {
  name: ScenarioName;
  kind: ScenarioKind;
  title: string;
  explanation: string;
  specSections: string;
  expected: ExpectedOutcome;
  /** Upper bound of a run (the runner aborts it after this). */
  maxDurationMs: number;
  run(ctx: ScenarioContext): Promise<void>;
}

const eq = (field: ExpectedCheck["field"], value: number, because: string): ExpectedCheck => ({ field, op: "eq", value, because });
const gt = (field: ExpectedCheck["field"], value: number, because: string): ExpectedCheck => ({ field, op: "gt", value, because });
const gte = (field: ExpectedCheck["field"], value: number, because: string): ExpectedCheck => ({ field, op: "gte", value, because });

/** Checks a summary against expected checks. */
export function checkOutcome(expected: ExpectedOutcome, s: RunSummary): { met: boolean; checks: CheckResult[] } {
  const checks = expected.checks.map((c) => {
    const actual = s[c.field];
    const ok = c.op === "eq" ? actual === c.value : c.op === "gt" ? actual > c.value : c.op === "gte" ? actual >= c.value : actual <= c.value;
    return { ...c, actual, ok };
  });
  return { met: checks.every((c) => c.ok), checks };
}

const NO_LOSS = eq("lost", 0, "every message was processed or is in the DLQ");
const NO_DUP = eq("duplicateSideEffects", 0, "no push was sent twice");

/** The Deduplicator of the correct setup: a 1 h window, a 10 s lease, lease marking. */
const LEASE_DEDUP = { ttlMs: HOUR_MS, leaseMs: 10_000, marking: "lease" } as const;

/** A stack in spec order with fast retries around the given Deduplicator options (`null`: none). */
const specStack = (dedup: ReplicaSetup["stack"]["dedup"], retry = FAST_RETRY): ReplicaSetup["stack"] => ({ order: "spec", retry, dedup });

/** The correct setup of spec §2 / §10 (lease marking, spec order) with a 1 h window. */
const correct = (extra: Partial<ReplicaSetup> = {}): ReplicaSetup => ({
  stack: specStack(LEASE_DEDUP),
  behaviour: { idempotent: true },
  ...extra,
});

/** Starts replica-1 with `setup`, publishes `n` messages and waits for a quiet period (45 s at most). */
async function oneReplicaRun(ctx: ScenarioContext, setup: ReplicaSetup, n: number): Promise<void> {
  await ctx.startReplica("replica-1", setup);
  await ctx.publish(n);
  await settled(ctx);
}

/** Starts replica-1 with `setup`, publishes `n` messages and waits until all succeeded (30 s at most): the ids. */
async function firstReplicaHandles(ctx: ScenarioContext, setup: ReplicaSetup, n: number): Promise<string[]> {
  await ctx.startReplica("replica-1", setup);
  const ids = await ctx.publish(n);
  await ctx.until(() => ctx.probe.succeeded.size >= n, 30_000);
  return ids;
}

/** Waits until nothing happened for {@link quiet} (45 s at most). */
const settled = (ctx: ScenarioContext) => ctx.settle(quiet(ctx), 45_000);

/** A quiet period long enough for late redeliveries: Kafka rebalances take longer than the embedded broker's. */
const quiet = (ctx: ScenarioContext) => (ctx.env.transport.mode === "real" ? 2500 : 600);

const every = (n: number, r = 0) => (m: Message) => seqOf(m) % n === r;

// --- scenario constants (the expected values refer to them) ---------------------------------
const RETRY_N = 30;
const REBALANCE_N = 120;
const FORWARD_N = 40;
const FORWARD_EVERY = 4;
const RESTART_N = 60;
const OUTAGE_N = 60;
const NODEDUP_N = 30;
const BUSINESS_REVIEWS = 10;
const CHAINS = 10;
const SHORT_TTL_N = 20;
const CACHE_N = 60;
const BEFORE_RETRY_N = 20;
const NAIVE_N = 24;

/** Every scenario, in presentation order. */
export const SCENARIOS: readonly ScenarioDefinition[] = [
  {
    name: "retry-on-error",
    kind: "duplicate-source",
    title: "Retry on a handler error",
    explanation:
      "Every third push fails twice (the provider times out) and Retry runs the handler again. The Deduplicator sits inside Retry and releases its key when an attempt fails, so each retry really runs the handler; the push is sent once per message.",
    specSections: "§1, §2, §10",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, one push per message, more handler calls than messages",
      checks: [NO_LOSS, NO_DUP, eq("sideEffects", RETRY_N, "one push per message"), gt("handlerCalls", RETRY_N, "failed attempts were retried"), eq("dlq", 0, "every message succeeded within the retry budget")],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await oneReplicaRun(ctx, correct({ behaviour: { idempotent: true, failBeforePush: (m, attempt) => every(3)(m) && attempt <= 2 } }), RETRY_N);
    },
  },
  {
    name: "rebalance",
    kind: "duplicate-source",
    title: "Consumer-group rebalance",
    explanation:
      "Replicas commit offsets on an interval (10 s here; kafkajs's auto-commit default is 5 s). Replica 1 has consumed everything when replicas 2 and 3 join: the rebalance hands partitions over at their last committed offset, and the acked-but-uncommitted tail is read again. The shared Redis knows those UUIDs: every re-read is swallowed.",
    specSections: "§1, §2",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, the re-read tail deduplicated",
      checks: [NO_LOSS, NO_DUP, eq("sideEffects", REBALANCE_N, "one push per message"), gt("deduplicated", 0, "the rebalance re-delivered the uncommitted tail")],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      const setup = correct({ subscriber: { commitIntervalMs: 10_000 } });
      await firstReplicaHandles(ctx, setup, REBALANCE_N);
      await ctx.startReplica("replica-2", setup);
      await ctx.startReplica("replica-3", setup);
      await ctx.settle(quiet(ctx), 30_000);
      await ctx.replicas[1]!.stop();
      await ctx.settle(quiet(ctx), 20_000);
    },
  },
  {
    name: "forwarder-republish",
    kind: "duplicate-source",
    title: "Outbox forwarder re-publishes",
    explanation:
      "The outbox forwarder wrote every fourth event to Kafka but crashed before marking its outbox row; after the restart it publishes the same row again, with the same UUID. The Deduplicator recognises the UUID and acks the copy without running the handler.",
    specSections: "§1, §2",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, every re-published copy deduplicated",
      checks: [NO_LOSS, NO_DUP, eq("sideEffects", FORWARD_N, "one push per message"), gte("deduplicated", FORWARD_N / FORWARD_EVERY, "each re-published copy was swallowed")],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await ctx.startReplica("replica-1", correct());
      const ids = await ctx.publish(FORWARD_N);
      ctx.republishLater(ids.filter((_, i) => i % FORWARD_EVERY === 0), 600);
      await settled(ctx);
    },
  },
  {
    name: "restart-before-commit",
    kind: "duplicate-source",
    title: "Restart before the offset commit",
    explanation:
      "Replica 1 runs the handler for a batch and exits before committing the offsets. Its successor starts at the last committed offset and reads that batch again; the keys are already done in Redis, so nothing is processed twice.",
    specSections: "§1, §2",
    expected: {
      summary: "lost 0, duplicateSideEffects 0, the re-read batch deduplicated",
      checks: [NO_LOSS, NO_DUP, eq("sideEffects", RESTART_N, "one push per message"), gt("deduplicated", 0, "the successor re-read what was handled but not committed")],
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
      await ctx.publish(RESTART_N);
      await ctx.until(() => r1.crashed, 30_000);
      await r1.done;
      await ctx.startReplica("replica-2", correct());
      await settled(ctx);
    },
  },
  {
    name: "redis-outage-fail-open",
    kind: "redis-outage",
    title: "Redis outage, fail-open",
    explanation:
      "Redis refuses connections for about a second while traffic flows and the forwarder re-sends some events. Fail-open lets every message through unchecked: the service keeps consuming, and the repeats that arrive meanwhile reach the handler — whose own idempotency (INSERT … ON CONFLICT DO NOTHING) stops them.",
    specSections: "§4, §5",
    expected: {
      summary: "lost 0, dlq 0, duplicateSideEffects 0; repeats reached the handler and were stopped there",
      checks: [NO_LOSS, NO_DUP, eq("dlq", 0, "fail-open never fails a message because of Redis"), eq("sideEffects", OUTAGE_N, "one push per message"), gt("handlerCalls", OUTAGE_N, "repeats passed the Deduplicator during the outage")],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      const faulty = new FaultyRepository(ctx.repository);
      const first = await firstReplicaHandles(ctx, correct({ repository: failOpen(faulty) }), OUTAGE_N / 3);
      faulty.set({ errorRate: 1 });
      ctx.republishLater(first.filter((_, i) => i % 2 === 0), 0);
      const during = ctx.publishOverTime(OUTAGE_N / 3, 40);
      await ctx.sleep(600);
      await during;
      await ctx.until(() => ctx.probe.succeeded.size >= (2 * OUTAGE_N) / 3, 20_000);
      faulty.set({ errorRate: 0 });
      await ctx.publish(OUTAGE_N / 3);
      await settled(ctx);
    },
  },
  {
    name: "redis-outage-fail-closed",
    kind: "redis-outage",
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
      await ctx.startReplica("replica-1", correct({ repository: failClosed(faulty), stack: specStack(LEASE_DEDUP, retryShort) }));
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
  {
    name: "anti-no-dedup",
    kind: "anti-pattern",
    title: "Anti-pattern: no dedup, handler not idempotent",
    explanation:
      "No Deduplicator, and a handler that pushes first and saves afterwards. When saving fails after the push, Retry runs the handler again and the user gets a second push.",
    specSections: "§9.1",
    expected: {
      summary: "duplicate pushes (duplicateSideEffects > 0)",
      checks: [gt("duplicateSideEffects", 0, "each retried message was pushed again"), eq("deduplicated", 0, "there is no Deduplicator"), NO_LOSS],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await oneReplicaRun(ctx, { stack: specStack(null), behaviour: { idempotent: false, failAfterPush: (m, attempt) => every(3)(m) && attempt === 1 } }, NODEDUP_N);
    },
  },
  {
    name: "anti-business-key",
    kind: "anti-pattern",
    title: "Anti-pattern: dedup by business key",
    explanation:
      "The key is user:<id>:event:review.updated:ref:<review> instead of the event id. Each review is legitimately updated twice (two events, two UUIDs); the second update has the same business key and is swallowed as a 'duplicate' — a lost event. A window per business key on purpose is a rate limiter, a different feature. (Here the stack swallows payload conflicts to show the loss; by default the payload fingerprint catches the second update as a conflict and sends it to the DLQ.)",
    specSections: "§2, §9.2",
    expected: {
      summary: "second legitimate updates swallowed (lost > 0)",
      checks: [gte("lost", BUSINESS_REVIEWS, "the second update of each review was swallowed"), gte("deduplicated", BUSINESS_REVIEWS, "distinct events shared a key")],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      const businessKey = (m: Message) => {
        const p = JSON.parse(Buffer.from(m.payload).toString("utf8")) as { userId: string; reviewId: string };
        return `user:${p.userId}:event:review.updated:ref:${p.reviewId}`;
      };
      await ctx.startReplica("replica-1", correct({ stack: specStack({ ttlMs: HOUR_MS, leaseMs: 10_000, keyFactory: businessKey, onPayloadConflict: "swallow" }) }));
      for (let round = 0; round < 2; round++) {
        for (let r = 0; r < BUSINESS_REVIEWS; r++) await ctx.publish(1, { eventType: "review.updated", fields: { userId: `u${r}`, reviewId: `rev${r}`, rating: 3 + round } });
        await ctx.settle(200, 20_000);
      }
      await settled(ctx);
    },
  },
  {
    name: "anti-correlation-id",
    kind: "anti-pattern",
    title: "Anti-pattern: dedup by Correlation-Id",
    explanation:
      "The key is the Correlation-Id, which one HTTP request shares with every event it causes. Of each chain of three events, the first is processed and the other two are swallowed. (Here the stack swallows payload conflicts to show the loss; by default the payload fingerprint catches them and sends them to the DLQ.)",
    specSections: "§6",
    expected: {
      summary: "chain events swallowed (lost = 2 of every 3)",
      checks: [gte("lost", CHAINS * 2, "the 2nd and 3rd event of each chain were swallowed"), gte("deduplicated", CHAINS * 2, "distinct events shared a key")],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      const byCorrelation = (m: Message) => m.metadata[CORRELATION_ID_KEY] ?? "";
      await ctx.startReplica("replica-1", correct({ stack: specStack({ ttlMs: HOUR_MS, leaseMs: 10_000, keyFactory: byCorrelation, onPayloadConflict: "swallow" }) }));
      for (let c = 0; c < CHAINS; c++) {
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
    kind: "anti-pattern",
    title: "Anti-pattern: a window shorter than the repeats",
    explanation:
      "A 5-minute TTL, compressed here to 1.5 s, with a handler that is not idempotent itself. A repeat inside the window is swallowed; the forwarder's repeat 3 s later finds no key and the push goes out twice. The lint flags any TTL under 10 minutes as an error.",
    specSections: "§3, §9.3",
    expected: {
      summary: "repeats after the window processed twice (duplicateSideEffects > 0)",
      checks: [gte("duplicateSideEffects", SHORT_TTL_N / 2, "repeats after the window were processed again"), gt("deduplicated", 0, "repeats inside the window were still caught"), NO_LOSS],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await ctx.startReplica("replica-1", {
        stack: specStack({ ttlMs: 1500, leaseMs: 1500, marking: "lease" }),
        behaviour: { idempotent: false },
      });
      const ids = await ctx.publish(SHORT_TTL_N);
      ctx.republishLater(ids.slice(0, 4), 200);
      ctx.republishLater(ids, 3500);
      await settled(ctx);
    },
  },
  {
    name: "anti-in-process-cache",
    kind: "anti-pattern",
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
      await firstReplicaHandles(ctx, setup(), CACHE_N);
      await ctx.startReplica("replica-2", setup());
      await settled(ctx);
    },
  },
  {
    name: "anti-dedup-before-retry",
    kind: "anti-pattern",
    title: "Anti-pattern: Deduplicator outside PoisonQueue and Retry",
    explanation:
      "The Deduplicator sits outside PoisonQueue and Retry. While a downstream is down, every fourth message exhausts its retries and PoisonQueue acks it into the DLQ — which the Deduplicator takes as success and marks done. Once the downstream is back, the DLQ is replayed: every replay is swallowed as a duplicate, so those messages are never processed (spec §10).",
    specSections: "§9.6, §10",
    expected: {
      summary: "the DLQ replay is swallowed (lost > 0)",
      checks: [gte("lost", BEFORE_RETRY_N / 4, "the replayed messages were swallowed"), gte("deduplicated", BEFORE_RETRY_N / 4, "the replays hit keys marked done"), eq("dlq", 0, "everything in the DLQ was replayed")],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      let downstreamUp = false;
      await ctx.startReplica("replica-1", {
        stack: { order: "dedup-outside", retry: { ...FAST_RETRY, maxRetries: 2 }, dedup: LEASE_DEDUP },
        behaviour: { idempotent: true, failBeforePush: (m) => !downstreamUp && every(4)(m) },
      });
      await ctx.publish(BEFORE_RETRY_N);
      await settled(ctx);
      downstreamUp = true;
      await ctx.replayDlq();
      await settled(ctx);
    },
  },
  {
    name: "anti-naive-marking",
    kind: "anti-pattern",
    title: "Anti-pattern: the note's marking (never released)",
    explanation:
      "The note's order (Deduplicator inside Retry) with Watermill's marking: the key is set before the handler runs and never removed. Every fourth message fails its first attempt; the retry finds the key and is swallowed as a 'duplicate'. The message is acked unprocessed and is not in the DLQ: lost.",
    specSections: "§10",
    expected: {
      summary: "failed first attempts lost (lost > 0, dlq 0)",
      checks: [gte("lost", NAIVE_N / 4, "each retried message was swallowed"), eq("dlq", 0, "nothing reached the DLQ: the loss is silent")],
    },
    maxDurationMs: 60_000,
    async run(ctx) {
      await oneReplicaRun(ctx, { stack: specStack({ ttlMs: HOUR_MS, marking: "naive" }), behaviour: { idempotent: true, failBeforePush: (m, attempt) => every(4)(m) && attempt === 1 } }, NAIVE_N);
    },
  },
];

/** Looks a scenario up by name. */
export function scenarioByName(name: string): ScenarioDefinition | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
