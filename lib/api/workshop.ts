/**
 * Request and response shapes of the workshop and live-demo API (`app/api/workshop/**`,
 * `app/api/demo/**`), as zod schemas with their inferred types.
 *
 * Isomorphic: no Node imports. The server builds these objects (`server/workshop`, `server/demo`), the route tests
 * parse responses with the schemas, and the UI may parse with them too (`XxxSchema.parse(json)`).
 *
 * Endpoints:
 * - `GET  /api/workshop/scenarios` → {@link ScenarioList}
 * - `POST /api/workshop/scenarios/{name}/runs[?pace=fast|narrated]` → 202 {@link RunCreated}; 404 unknown
 *   name; 409 while that scenario runs (body `ErrorBody` of lib/api/common.ts with `runId` of the running one)
 * - `GET  /api/workshop/runs/{runId}` → {@link RunView}; 404 unknown / expired run id
 * - `GET  /api/demo/sources` → {@link DemoSources}; `PUT /api/demo/sources` with {@link DemoSourcesPatch} → {@link DemoSources}
 * - `GET  /api/demo/faults`  → {@link DemoFaults};  `PUT /api/demo/faults` with {@link DemoFaultsPatch} → {@link DemoFaults}
 *
 * State-changing calls (POST, PUT) follow the access rule of `server/access.ts`: open in embedded
 * mode; otherwise `Authorization: Bearer <WORKSHOP_TOKEN>` when that is set, else only from the
 * machine itself (localhost). 401 / 403 otherwise. Every non-2xx body is `{ error, detail }`
 * (`ErrorBody`, lib/api/common.ts: one error shape for every route).
 */
import { z } from "zod";
import { appModeSchema } from "./common";

/** The workshop scenarios, in presentation order. */
export const SCENARIO_NAMES = [
  "retry-on-error",
  "rebalance",
  "forwarder-republish",
  "restart-before-commit",
  "redis-outage-fail-open",
  "redis-outage-fail-closed",
  "anti-no-dedup",
  "anti-business-key",
  "anti-correlation-id",
  "anti-short-ttl",
  "anti-in-process-cache",
  "anti-dedup-before-retry",
  "anti-naive-marking",
  "crash-storm-guarantees",
] as const;
/** Schema of a scenario name (route param `{name}`). */
export const scenarioNameSchema = z.enum(SCENARIO_NAMES);
/** One scenario name. */
export type ScenarioName = z.infer<typeof scenarioNameSchema>;

/**
 * Group of a scenario: a duplicate source with the correct setup, a Redis outage, an anti-pattern,
 * or the guarantees compared under one crash storm.
 */
export const scenarioKindSchema = z.enum(["duplicate-source", "redis-outage", "anti-pattern", "guarantees"]);
/** Group of a scenario. */
export type ScenarioKind = z.infer<typeof scenarioKindSchema>;

/**
 * How fast a run goes: `fast` publishes each batch at once (a run takes seconds); `narrated` publishes
 * one message every {@link NARRATED_GAP_MS} so each delivery shows on the timeline as it happens.
 */
export const RUN_PACES = ["fast", "narrated"] as const;
/** Schema of a run's pace (`?pace=` of `POST …/runs`; `fast` when absent). */
export const runPaceSchema = z.enum(RUN_PACES);
/** A run's pace. */
export type RunPace = z.infer<typeof runPaceSchema>;
/** Time between two published messages of a `narrated` run, ms (4 messages a second). */
export const NARRATED_GAP_MS = 250;
/** Upper bound of any narrated run, ms (the runner stops a run after it). */
export const NARRATED_MAX_RUN_MS = 120_000;

/** The numbers every run ends with. */
export const runSummarySchema = z.object({
  /** Distinct messages the scenario published (each with its own UUID). Re-sends of the same UUID are not counted. */
  published: z.number().int(),
  /**
   * Records the run wrote to its topic, as the broker acknowledged them: every published event plus
   * every re-send of the same UUID (forwarder re-publish, DLQ replay). What Kafka holds.
   */
  records: z.number().int(),
  /**
   * Deliveries of records to the consumer stack (a redelivery or a duplicate copy counts again;
   * Retry's attempts within one delivery do not). The timeline lists each attempt's verdict.
   */
  deliveries: z.number().int(),
  /** Calls of the handler function itself (each retry attempt counts). */
  handlerCalls: z.number().int(),
  /** Deliveries swallowed by the deduplicator (`messages_deduplicated_total` of this run). */
  deduplicated: z.number().int(),
  /** Side effects performed ("push sent"). */
  sideEffects: z.number().int(),
  /** Side effects for an event id that had already been sent: duplicates that leaked through. */
  duplicateSideEffects: z.number().int(),
  /** Published events whose handler never succeeded and that are not in the DLQ (replayed ones count as out of it). */
  lost: z.number().int(),
  /** Events in the run's DLQ that were not replayed (a scenario that replays its DLQ takes them out). */
  dlq: z.number().int(),
});
/** The numbers every run ends with. */
export type RunSummary = z.infer<typeof runSummarySchema>;
/** Names of the summary fields. */
export type SummaryField = keyof RunSummary;
/** The summary fields, in display order. */
export const SUMMARY_FIELDS = [
  "published",
  "records",
  "deliveries",
  "handlerCalls",
  "deduplicated",
  "sideEffects",
  "duplicateSideEffects",
  "lost",
  "dlq",
] as const satisfies readonly SummaryField[];

/**
 * The delivery guarantees a scenario can compare, in display order: the Deduplicator on Redis (at
 * least once: a crash between the side effect and its `done` mark runs it again), the PostgreSQL
 * inbox (the side effect and its inbox row in one transaction) and Kafka transactions (outputs and
 * consumed offsets in one transaction, read by a `read_committed` consumer).
 */
export const GUARANTEES = ["redis", "inbox", "transactions"] as const;
/** Schema of one guarantee. */
export const guaranteeSchema = z.enum(GUARANTEES);
/** One guarantee. */
export type Guarantee = z.infer<typeof guaranteeSchema>;

/** One expected property of a summary: `field op value`, e.g. `lost eq 0`, `duplicateSideEffects gt 0`. */
export const expectedCheckSchema = z.object({
  /**
   * The check reads this guarantee's summary (`RunView.guarantees`) instead of the run's. A
   * guarantee that was not measured in the run leaves the check unevaluated. @default the run's summary
   */
  guarantee: guaranteeSchema.optional(),
  field: z.enum(SUMMARY_FIELDS),
  op: z.enum(["eq", "gt", "gte", "lte"]),
  value: z.number(),
  /** Why, in one sentence, for the presenter. */
  because: z.string(),
});
/** One expected property of a summary. */
export type ExpectedCheck = z.infer<typeof expectedCheckSchema>;

/** What a scenario is expected to show: a sentence and the checks a run must pass. */
export const expectedOutcomeSchema = z.object({
  /** One-line statement, e.g. "lost 0, duplicateSideEffects 0". */
  summary: z.string(),
  checks: z.array(expectedCheckSchema),
});
/** What a scenario is expected to show. */
export type ExpectedOutcome = z.infer<typeof expectedOutcomeSchema>;

/** One scenario as listed by `GET /api/workshop/scenarios`. */
export const scenarioInfoSchema = z.object({
  name: scenarioNameSchema,
  kind: scenarioKindSchema,
  title: z.string(),
  /** What happens and why, a short paragraph (plain text). */
  explanation: z.string(),
  /** Section(s) of the spec it illustrates, e.g. "§1, §10". */
  specSections: z.string(),
  expected: expectedOutcomeSchema,
  /** Upper bound of a `fast` run's duration in ms (every run is bounded; ≤ 120000). */
  maxDurationMs: z.number().int(),
  /** Upper bound of a `narrated` run's duration in ms (≤ 120000). */
  narratedMaxDurationMs: z.number().int(),
  /** Id of the run of this scenario in progress, or null. */
  runningRunId: z.string().nullable(),
  /** Id of the latest finished run of this scenario kept in memory, or null. */
  lastRunId: z.string().nullable(),
});
/** One scenario as listed. */
export type ScenarioInfo = z.infer<typeof scenarioInfoSchema>;

/** `GET /api/workshop/scenarios`. */
export const scenarioListSchema = z.object({
  mode: appModeSchema,
  scenarios: z.array(scenarioInfoSchema),
});
/** `GET /api/workshop/scenarios`. */
export type ScenarioList = z.infer<typeof scenarioListSchema>;

/** `POST /api/workshop/scenarios/{name}/runs` (202). Poll `GET /api/workshop/runs/{runId}`. */
export const runCreatedSchema = z.object({ runId: z.string() });
/** `POST /api/workshop/scenarios/{name}/runs`. */
export type RunCreated = z.infer<typeof runCreatedSchema>;

/** What happened to one delivery. */
export const deliveryVerdictSchema = z.enum(["processed", "deduplicated", "in-progress", "error", "poisoned"]);
/** What happened to one delivery. */
export type DeliveryVerdict = z.infer<typeof deliveryVerdictSchema>;

/** One delivery attempt in a run's timeline. */
export const timelineEntrySchema = z.object({
  /** ISO-8601 time the verdict was reached. */
  at: z.string(),
  /** Message UUID (event id). */
  uuid: z.string(),
  /** Which consumer replica handled it, e.g. `replica-1`. */
  replica: z.string(),
  /** Attempt number within the delivery (Retry), 1-based. */
  attempt: z.number().int(),
  verdict: deliveryVerdictSchema,
  /** Short note: the error text, "side effect sent", "duplicate side effect!", … */
  note: z.string().optional(),
});
/** One delivery attempt in a run's timeline. */
export type TimelineEntry = z.infer<typeof timelineEntrySchema>;

/** One series of a run on the workshop's registry (a Deduplicator or PoisonQueue counter whose `topic` is the run's). */
export const runSeriesSchema = z.object({
  name: z.string(),
  labels: z.record(z.string(), z.string()),
  value: z.number(),
});
/** One series of a run on the workshop's registry. */
export type RunSeries = z.infer<typeof runSeriesSchema>;

/**
 * Result of one expected check against the run's summary. `actual` and `ok` are null when the check
 * reads a guarantee that was not measured in this run (`notMeasured` says why): unknown, not zero.
 */
export const checkResultSchema = expectedCheckSchema.extend({
  actual: z.number().nullable(),
  ok: z.boolean().nullable(),
  notMeasured: z.string().optional(),
});
/** Result of one expected check. */
export type CheckResult = z.infer<typeof checkResultSchema>;

/** Fields every state of a guarantee's run has. */
const guaranteeBase = {
  guarantee: guaranteeSchema,
  /** The setup, one line: "Deduplicator on Redis, lease marking, 1 s lease". */
  setup: z.string(),
};

/**
 * One guarantee under a scenario's crash storm: still running, measured (its own summary, the side
 * effects counted where they landed: `countedBy`), not run (no PostgreSQL, no Kafka: `reason`), or
 * failed while it ran (`reason`). Only `measured` carries figures.
 */
export const guaranteeRunSchema = z.discriminatedUnion("status", [
  z.object({ ...guaranteeBase, status: z.literal("running"), crashes: z.number().int() }),
  z.object({
    ...guaranteeBase,
    status: z.literal("measured"),
    /** Times its consumer died between a side effect and its `done` mark / commit. */
    crashes: z.number().int(),
    /** Its consumer group's counts; `sideEffects`, `duplicateSideEffects` and `lost` as counted by `countedBy`. */
    summary: runSummarySchema,
    /** Who counted the side effects: "rows of …", "a read_committed consumer of …". */
    countedBy: z.string(),
  }),
  z.object({ ...guaranteeBase, status: z.literal("not-run"), reason: z.string() }),
  z.object({ ...guaranteeBase, status: z.literal("failed"), reason: z.string() }),
]);
/** One guarantee under a scenario's crash storm. */
export type GuaranteeRun = z.infer<typeof guaranteeRunSchema>;

/** `GET /api/workshop/runs/{runId}`. */
export const runViewSchema = z.object({
  runId: z.string(),
  scenario: scenarioNameSchema,
  mode: appModeSchema,
  status: z.enum(["running", "done", "failed"]),
  /** The pace it runs at. */
  pace: runPaceSchema,
  /**
   * The run's own topic and DLQ topic (`workshop.<scenario>.<runId>`, `….dlq`): its DLQ copies live
   * there, not in the demo's DLQ the DLQ page lists, and both are deleted when the run ends.
   */
  topics: z.object({ topic: z.string(), dlq: z.string() }),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  /** Counts so far while running; final when done. */
  summary: runSummarySchema,
  /** The checks of the scenario's expected outcome against `summary`; null while running. */
  outcome: z.object({ met: z.boolean(), checks: z.array(checkResultSchema) }).nullable(),
  /**
   * Attempt verdicts, oldest first, capped (see `timelineTotal`): one entry per handler call, per
   * swallowed or refused attempt and per DLQ publish — so a delivery that Retry ran three times
   * has three entries; `summary.deliveries` counts it once.
   */
  timeline: z.array(timelineEntrySchema),
  /** How many timeline entries (attempt verdicts) the run produced; more than `timeline.length` when capped. */
  timelineTotal: z.number().int(),
  /** Why the run failed (status `failed`), else null. */
  error: z.string().nullable(),
  /** Each guarantee a scenario compares (the crash storm), in {@link GUARANTEES} order; null for the other scenarios. */
  guarantees: z.array(guaranteeRunSchema).nullable(),
  /**
   * The run's counters as the middleware counted them on the workshop's own registry (never on
   * `/api/metrics`); read live while running, kept here once the run ended and its series were
   * removed from the registry.
   */
  series: z.array(runSeriesSchema),
});
/** `GET /api/workshop/runs/{runId}`. */
export type RunView = z.infer<typeof runViewSchema>;

/** Most timeline entries a run keeps (the first ones; `timelineTotal` counts all). */
export const TIMELINE_CAP = 500;
