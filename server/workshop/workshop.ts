/**
 * Runs workshop scenarios in the background, one run per scenario at a time, and keeps the
 * latest runs in memory for `GET /api/workshop/runs/{runId}`.
 */
import {
  NARRATED_MAX_RUN_MS,
  type RunPace,
  type RunView,
  type ScenarioList,
  type ScenarioName,
} from "@/lib/api/workshop";
import { HttpError } from "@/server/http";
import { ScenarioContext, type ScenarioEnv } from "./scenario-context";
import { checkOutcome, SCENARIOS, scenarioByName } from "./scenarios";

/** `POST …/runs` for a name that is not a scenario (→ 404). */
export class UnknownScenarioError extends HttpError {
  constructor(readonly scenario: string) {
    super(404, "not_found", `no scenario named ${scenario}; GET /api/workshop/scenarios lists them`);
  }
}

/** `POST …/runs` while that scenario runs (→ 409). */
export class ScenarioBusyError extends HttpError {
  constructor(
    readonly scenario: string,
    /** The run in progress (the 409 answer's `runId`). */
    readonly runId: string,
  ) {
    super(409, "conflict", `scenario ${scenario} is already running as run ${runId}; wait for it to finish`);
  }
}

interface RunRecord {
  view: RunView;
  ctx: ScenarioContext | null;
  finished: Promise<void>;
}

/** Options of {@link WorkshopRunner}. */
export interface WorkshopRunnerOptions {
  /** How many finished runs are kept. @default 50 */
  keepRuns?: number;
  /** Hard upper bound of any run, ms (each scenario declares its own, at most this). @default 120000 */
  maxRunMs?: number;
}

/** Defaults of {@link WorkshopRunnerOptions}. */
export const DEFAULT_WORKSHOP_RUNNER_OPTIONS = { keepRuns: 50, maxRunMs: 120_000 } as const;

/** The scenario runner. */
export class WorkshopRunner {
  private readonly runs = new Map<string, RunRecord>();
  private readonly running = new Map<ScenarioName, string>();
  private readonly last = new Map<ScenarioName, string>();
  private readonly o: Required<WorkshopRunnerOptions>;

  constructor(
    private readonly env: () => ScenarioEnv,
    options: WorkshopRunnerOptions = {},
  ) {
    this.o = { ...DEFAULT_WORKSHOP_RUNNER_OPTIONS, ...options };
    if (!Number.isInteger(this.o.keepRuns) || this.o.keepRuns < 1)
      throw new RangeError("WorkshopRunner: keepRuns must be an integer ≥ 1");
    if (!(this.o.maxRunMs >= 1000 && this.o.maxRunMs <= 120_000))
      throw new RangeError("WorkshopRunner: maxRunMs must be in [1000, 120000]");
  }

  /** `GET /api/workshop/scenarios`. */
  list(): ScenarioList {
    return {
      mode: this.env().transport.mode,
      scenarios: SCENARIOS.map((s) => ({
        name: s.name,
        kind: s.kind,
        title: s.title,
        explanation: s.explanation,
        specSections: s.specSections,
        expected: s.expected,
        maxDurationMs: this.limit(s, "fast"),
        narratedMaxDurationMs: this.limit(s, "narrated"),
        runningRunId: this.running.get(s.name) ?? null,
        lastRunId: this.last.get(s.name) ?? null,
      })),
    };
  }

  /** How long a run of `s` at `pace` may take: the scenario's own bound when fast, the narrated bound when narrated. */
  private limit(s: { maxDurationMs: number }, pace: RunPace): number {
    return Math.min(pace === "narrated" ? NARRATED_MAX_RUN_MS : s.maxDurationMs, this.o.maxRunMs);
  }

  /**
   * Starts a run of `name` at `pace` in the background; resolves its id at once.
   * @throws UnknownScenarioError, ScenarioBusyError
   */
  start(name: string, pace: RunPace = "fast"): string {
    const def = scenarioByName(name);
    if (!def) throw new UnknownScenarioError(name);
    const busy = this.running.get(def.name);
    if (busy) throw new ScenarioBusyError(def.name, busy);
    const env = this.env();
    const abort = new AbortController();
    const ctx = new ScenarioContext(env, def.name, abort.signal, pace);
    const view: RunView = {
      runId: ctx.runId,
      scenario: def.name,
      mode: env.transport.mode,
      status: "running",
      pace,
      topics: { topic: ctx.topic, dlq: ctx.dlqTopic },
      startedAt: new Date().toISOString(),
      finishedAt: null,
      summary: ctx.probe.summary(),
      outcome: null,
      timeline: [],
      timelineTotal: 0,
      error: null,
      series: [],
      guarantees: null,
    };
    this.running.set(def.name, ctx.runId);
    const limit = this.limit(def, pace);
    const rec: RunRecord = { view, ctx, finished: Promise.resolve() };
    rec.finished = (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            abort.abort();
            reject(new Error(`run exceeded its limit of ${limit} ms and was stopped`));
          }, limit);
        });
        await Promise.race([
          (async () => {
            await ctx.setup();
            await def.run(ctx);
          })(),
          timeout,
        ]);
        view.status = "done";
      } catch (e) {
        view.status = "failed";
        view.error = e instanceof Error ? e.message : String(e);
      } finally {
        clearTimeout(timer);
        abort.abort();
        view.summary = ctx.probe.summary();
        view.timeline = [...ctx.probe.timeline];
        view.timelineTotal = ctx.probe.timelineTotal;
        view.guarantees = ctx.probe.guarantees;
        if (view.status === "done") view.outcome = checkOutcome(def.expected, view.summary, view.guarantees);
        await ctx.teardown().catch(() => undefined);
        // After the replicas stopped: the final counts, then the run leaves the workshop registry.
        view.series = await ctx.series().catch(() => []);
        await ctx.dropSeries().catch(() => undefined);
        view.finishedAt = new Date().toISOString();
        this.running.delete(def.name);
        this.last.set(def.name, ctx.runId);
        rec.ctx = null;
      }
    })();
    this.runs.set(ctx.runId, rec);
    this.prune();
    return ctx.runId;
  }

  /** `GET /api/workshop/runs/{runId}`; undefined when unknown or pruned. */
  async view(runId: string): Promise<RunView | undefined> {
    const rec = this.runs.get(runId);
    if (!rec) return undefined;
    const live = rec.ctx;
    const v = rec.view;
    const probe = live?.probe;
    const series = live ? await live.series().catch(() => v.series) : v.series;
    return {
      ...v,
      summary: probe ? probe.summary() : v.summary,
      timeline: probe ? [...probe.timeline] : v.timeline,
      timelineTotal: probe ? probe.timelineTotal : v.timelineTotal,
      guarantees: probe ? probe.guarantees : v.guarantees,
      series,
    };
  }

  /** Resolves with the final view once the run finished (tests, scripts). */
  async wait(runId: string): Promise<RunView> {
    const rec = this.runs.get(runId);
    if (!rec) throw new RangeError(`WorkshopRunner.wait: unknown run ${runId}`);
    await rec.finished;
    return (await this.view(runId))!;
  }

  /** Ids of runs in progress. */
  runningIds(): string[] {
    return [...this.running.values()];
  }

  private prune(): void {
    const done = [...this.runs.entries()].filter(([, r]) => r.view.status !== "running");
    while (this.runs.size > this.o.keepRuns && done.length > 0) this.runs.delete(done.shift()![0]);
  }
}
