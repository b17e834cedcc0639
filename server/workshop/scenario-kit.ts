/**
 * What the workshop scenarios are written with: the scenario's shape, the checks of an expected
 * outcome, the correct setup of spec §2 / §10 and the steps several scripts share. Time-compressed:
 * retry backoff in tens of ms, quiet periods under a few seconds.
 */
import type { Message } from "@/server/dedup";
import { HOUR_MS } from "@/names/keys";
import type { ExpectedCheck, ExpectedOutcome, ScenarioKind, ScenarioName } from "@/lib/api/workshop";
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

/** Scenarios of one kind, written without repeating it. */
export const ofKind = (
  kind: ScenarioKind,
  defs: ReadonlyArray<Omit<ScenarioDefinition, "kind">>,
): ScenarioDefinition[] => defs.map((d) => ({ ...d, kind }));

export const eq = (field: ExpectedCheck["field"], value: number, because: string): ExpectedCheck => ({
  field,
  op: "eq",
  value,
  because,
});
export const gt = (field: ExpectedCheck["field"], value: number, because: string): ExpectedCheck => ({
  field,
  op: "gt",
  value,
  because,
});
export const gte = (field: ExpectedCheck["field"], value: number, because: string): ExpectedCheck => ({
  field,
  op: "gte",
  value,
  because,
});

export const NO_LOSS = eq("lost", 0, "every message was processed or is in the DLQ");
export const NO_DUP = eq("duplicateSideEffects", 0, "no push was sent twice");

/** The Deduplicator of the correct setup: a 1 h window, a 10 s lease, lease marking. */
export const LEASE_DEDUP = { ttlMs: HOUR_MS, leaseMs: 10_000, marking: "lease" } as const;

/** A stack in spec order with fast retries around the given Deduplicator options (`null`: none). */
export const specStack = (dedup: ReplicaSetup["stack"]["dedup"], retry = FAST_RETRY): ReplicaSetup["stack"] => ({
  order: "spec",
  retry,
  dedup,
});

/** The correct setup of spec §2 / §10 (lease marking, spec order) with a 1 h window. */
export const correct = (extra: Partial<ReplicaSetup> = {}): ReplicaSetup => ({
  stack: specStack(LEASE_DEDUP),
  behaviour: { idempotent: true },
  ...extra,
});

/** Starts replica-1 with `setup`, publishes `n` messages and waits for a quiet period (45 s at most). */
export async function oneReplicaRun(ctx: ScenarioContext, setup: ReplicaSetup, n: number): Promise<void> {
  await ctx.startReplica("replica-1", setup);
  await ctx.publish(n);
  await settled(ctx);
}

/** Starts replica-1 with `setup`, publishes `n` messages and waits until all succeeded (30 s at most): the ids. */
export async function firstReplicaHandles(ctx: ScenarioContext, setup: ReplicaSetup, n: number): Promise<string[]> {
  await ctx.startReplica("replica-1", setup);
  const ids = await ctx.publish(n);
  await ctx.until(() => ctx.probe.succeeded.size >= n, 30_000);
  return ids;
}

/** Replica-2 joins with `setup` (and takes partitions over), then the run settles. */
export async function successorSettles(ctx: ScenarioContext, setup: ReplicaSetup): Promise<void> {
  await ctx.startReplica("replica-2", setup);
  await settled(ctx);
}

/** Waits until nothing happened for {@link quiet} (45 s at most). */
export const settled = (ctx: ScenarioContext) => ctx.settle(quiet(ctx), 45_000);

/** A quiet period long enough for late redeliveries: Kafka rebalances take longer than the embedded broker's. */
export const quiet = (ctx: ScenarioContext) => (ctx.env.transport.mode === "real" ? 2500 : 600);

/** Every `n`th message (by its `seq`), from `r`. */
export const every =
  (n: number, r = 0) =>
  (m: Message) =>
    seqOf(m) % n === r;
