/**
 * The guarantees compared under one crash storm (spec §11): the same events, the same crashes —
 * a consumer dying right after a side effect, before its `done` mark / COMMIT / transaction commit,
 * three times — against the Deduplicator on Redis, the PostgreSQL inbox and Kafka transactions,
 * each in its own consumer group on the run's topic. Each guarantee's side effects are counted by
 * their recipient: output records by a `read_committed` consumer, inbox effects as rows. A guarantee
 * that cannot run where the workshop runs is reported as not run, with the reason, never as 0.
 */
import type { ExpectedCheck, Guarantee, GuaranteeRun, RunSummary } from "@/lib/api/workshop";
import { INBOX_GUARANTEE } from "./crash-storm/inbox-rig";
import { REDIS_GUARANTEE } from "./crash-storm/redis-rig";
import type { GuaranteeSpec } from "./crash-storm/rig";
import { publishStormInput, runStorm, STORM } from "./crash-storm/storm";
import { stormReads } from "./crash-storm/storm-reads";
import { TRANSACTIONS_GUARANTEE } from "./crash-storm/transactions-rig";
import { RunProbe } from "./probe";
import type { ScenarioContext } from "./scenario-context";
import { eq, gt, ofKind, type ScenarioDefinition } from "./scenario-kit";

/** The guarantees the storm runs against, in display order. */
const GUARANTEE_SPECS: readonly GuaranteeSpec[] = [REDIS_GUARANTEE, INBOX_GUARANTEE, TRANSACTIONS_GUARANTEE];

/** `check` read from `guarantee`'s summary. */
const of = (guarantee: Guarantee, check: ExpectedCheck): ExpectedCheck => ({ guarantee, ...check });

/** A guarantee's probe: its own counts, its timeline entries on the run's timeline too. */
class GuaranteeProbe extends RunProbe {
  constructor(private readonly run: RunProbe) {
    super();
  }

  override entry(...args: Parameters<RunProbe["entry"]>): void {
    super.entry(...args);
    this.run.entry(...args);
  }
}

/** The run's view of each guarantee (`RunProbe.guarantees`), replaced as a whole on every change. */
class GuaranteeBoard {
  constructor(private readonly run: RunProbe) {}

  set(g: GuaranteeRun): void {
    const others = (this.run.guarantees ?? []).filter((x) => x.guarantee !== g.guarantee);
    const order = (x: GuaranteeRun) => GUARANTEE_SPECS.findIndex((s) => s.guarantee === x.guarantee);
    this.run.guarantees = [...others, g].sort((a, b) => order(a) - order(b));
  }
}

/** A guarantee's summary: its group's counts, with its side effects as their recipient counted them; and the events it lost. */
function measuredSummary(
  probe: RunProbe,
  ids: readonly string[],
  counts: Map<string, number>,
): { summary: RunSummary; lost: string[] } {
  let sideEffects = 0;
  let duplicateSideEffects = 0;
  const lost: string[] = [];
  for (const id of ids) {
    const n = counts.get(id) ?? 0;
    sideEffects += n;
    duplicateSideEffects += Math.max(0, n - 1);
    if (n === 0 && !probe.inDlq.has(id)) lost.push(id);
  }
  const s = probe.summary();
  return {
    summary: { ...s, published: ids.length, records: ids.length, sideEffects, duplicateSideEffects, lost: lost.length },
    lost,
  };
}

/**
 * Runs the storm against one guarantee and reports it on `board`; never throws (a failure is its
 * state). Its broker reads have their own client: a kafkajs client that read a topic another
 * guarantee deleted afterwards fails every later call.
 */
async function stormOne(
  ctx: ScenarioContext,
  spec: GuaranteeSpec,
  board: GuaranteeBoard,
  probe: RunProbe,
  ids: readonly string[],
  lostBy: Set<string>,
): Promise<void> {
  const setup = spec.setup(ctx);
  const base = { guarantee: spec.guarantee, setup };
  const failed = (e: unknown) => board.set({ ...base, status: "failed", reason: (e as Error)?.message ?? String(e) });
  const reads = stormReads(ctx.env.transport);
  let rig;
  try {
    rig = await spec.open(ctx, reads);
  } catch (e) {
    await reads.close();
    return failed(e);
  }
  if ("notRun" in rig) {
    await reads.close();
    return board.set({ ...base, status: "not-run", reason: rig.notRun });
  }
  try {
    board.set({ ...base, status: "running", crashes: 0 });
    const onCrash = (crashes: number) => board.set({ ...base, status: "running", crashes });
    const crashes = await runStorm(ctx, rig, probe, ids.length, onCrash);
    // One more try after a pause: a broker that has just created the output topic may not serve it yet.
    const { counts, countedBy } = await rig.count().catch(async () => (await ctx.sleep(500), rig.count()));
    const { summary, lost } = measuredSummary(probe, ids, counts);
    for (const id of lost) lostBy.add(id);
    board.set({ ...base, status: "measured", crashes, summary, countedBy });
  } catch (e) {
    failed(e);
  } finally {
    await rig.cleanup().catch(() => undefined);
    await reads.close();
  }
}

/**
 * The run's summary over every guarantee's group: their deliveries, calls and swallowed copies
 * added up; once one is measured, the side effects as counted, and an event lost when a measured
 * guarantee lost it (`lost`).
 */
function foldInto(run: RunProbe, probes: readonly RunProbe[], lost: ReadonlySet<string>): void {
  const sum = (f: (p: RunProbe) => number) => probes.reduce((n, p) => n + f(p), 0);
  run.deliveries = sum((p) => p.deliveries);
  run.handlerCalls = sum((p) => p.handlerCalls);
  run.deduplicated = sum((p) => p.deduplicated);
  for (const p of probes) for (const id of p.inDlq) run.inDlq.add(id);
  const measured = (run.guarantees ?? []).flatMap((g) => (g.status === "measured" ? [g.summary] : []));
  if (measured.length === 0) {
    for (const p of probes) for (const id of p.succeeded) run.succeeded.add(id);
    return;
  }
  run.sideEffects = measured.reduce((n, s) => n + s.sideEffects, 0);
  run.duplicateSideEffects = measured.reduce((n, s) => n + s.duplicateSideEffects, 0);
  run.succeeded.clear();
  for (const id of run.published) if (!lost.has(id)) run.succeeded.add(id);
}

/** The guarantee scenarios, in presentation order. */
export const GUARANTEE_SCENARIOS: readonly ScenarioDefinition[] = ofKind("guarantees", [
  {
    name: "crash-storm-guarantees",
    title: "Crash storm: three guarantees",
    explanation: `${STORM.events} events, and a consumer that dies ${STORM.crashes} times right after a side effect — before its done mark, its COMMIT, its transaction's commit — each time replaced by a successor. The same storm against three guarantees, each in its own consumer group: the Deduplicator on Redis publishes the dead replica's outputs again once its leases expire (at least once, as documented); the PostgreSQL inbox rolls the side-effect row back with its inbox row; Kafka transactions abort the dead replica's outputs, which a read_committed consumer never sees. A guarantee this server cannot run (no PostgreSQL, no real Kafka) is shown as not run, with why.`,
    specSections: "§1, §5, §11",
    expected: {
      summary: "Redis: duplicates > 0; inbox and Kafka transactions: 0 duplicates; none lost",
      checks: [
        of(
          "redis",
          gt("duplicateSideEffects", 0, "its successor runs again what the dead replica did but never marked done"),
        ),
        of("redis", eq("lost", 0, "the dead replica's leases expire and every event is run")),
        of("inbox", eq("duplicateSideEffects", 0, "the side-effect row commits with its inbox row or not at all")),
        of("inbox", eq("lost", 0, "the rolled-back event is read again and committed once")),
        of("transactions", eq("duplicateSideEffects", 0, "read_committed hides the dead replica's aborted outputs")),
        of("transactions", eq("lost", 0, "the aborted chunk's offsets were not committed: it runs again")),
      ],
    },
    maxDurationMs: 90_000,
    async run(ctx) {
      const board = new GuaranteeBoard(ctx.probe);
      for (const s of GUARANTEE_SPECS)
        board.set({ guarantee: s.guarantee, setup: s.setup(ctx), status: "running", crashes: 0 });
      const probes = GUARANTEE_SPECS.map(() => new GuaranteeProbe(ctx.probe));
      const lost = new Set<string>();
      const fold = setInterval(() => foldInto(ctx.probe, probes, lost), 250);
      try {
        const ids = await publishStormInput(ctx);
        await Promise.all(GUARANTEE_SPECS.map((s, i) => stormOne(ctx, s, board, probes[i]!, ids, lost)));
      } finally {
        clearInterval(fold);
        foldInto(ctx.probe, probes, lost);
      }
    },
  },
]);
