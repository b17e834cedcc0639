import { describe, expect, it } from "vitest";
import type { GuaranteeRun, RunSummary, RunView } from "@/lib/api/workshop";
import { scenarioEnv, type EnvOptions } from "../env";
import { checkOutcome, scenarioByName } from "../scenarios";
import { WorkshopRunner } from "../workshop";
import { STORM } from "./storm";

const NAME = "crash-storm-guarantees";

/** Runs the crash storm once in an environment of `o` (embedded broker and store). */
async function stormRun(o: EnvOptions = {}): Promise<RunView> {
  const env = scenarioEnv(o);
  try {
    const runner = new WorkshopRunner(() => env);
    return await runner.wait(runner.start(NAME));
  } finally {
    await env.close();
  }
}

const of = (v: RunView, g: GuaranteeRun["guarantee"]) => v.guarantees!.find((x) => x.guarantee === g)!;

describe("crash storm, embedded mode", () => {
  it("Redis dedup performs side effects twice under 3 crashes, as measured on the output topic; the inbox and Kafka transactions say why they did not run", async () => {
    const v = await stormRun();
    expect(v.error).toBeNull();
    const redis = of(v, "redis");
    if (redis.status !== "measured") throw new Error(`redis not measured: ${JSON.stringify(redis)}`);
    expect(redis.crashes).toBe(STORM.crashes);
    expect(redis.summary.duplicateSideEffects).toBeGreaterThan(0);
    expect(redis.summary.lost).toBe(0);
    expect(redis.summary.sideEffects).toBe(STORM.events + redis.summary.duplicateSideEffects);
    expect(of(v, "inbox")).toMatchObject({ status: "not-run", reason: "no PostgreSQL configured (set DATABASE_URL)" });
    expect(of(v, "transactions")).toMatchObject({
      status: "not-run",
      reason: expect.stringContaining("the embedded broker has no Kafka transactions"),
    });
    // Unknown is not zero: the checks of what did not run are not evaluated, and say why.
    const unmeasured = v.outcome!.checks.filter((c) => c.guarantee === "inbox" || c.guarantee === "transactions");
    expect(unmeasured.length).toBeGreaterThan(0);
    for (const c of unmeasured) {
      expect(c.actual).toBeNull();
      expect(c.ok).toBeNull();
      expect(c.notMeasured).toMatch(/^not run: /);
    }
    expect(v.outcome!.met).toBe(true);
    // The run's summary is the measured guarantees', and each crash is on the timeline.
    expect(v.summary.duplicateSideEffects).toBe(redis.summary.duplicateSideEffects);
    expect(v.timeline.filter((e) => /crashed right after this side effect/.test(e.note ?? ""))).toHaveLength(
      STORM.crashes,
    );
  }, 60_000);

  it("a PostgreSQL that does not answer: the inbox is not run, with the reason, while Redis dedup is measured", async () => {
    const v = await stormRun({ databaseUrl: "postgres://postgres@127.0.0.1:1/none" });
    const inbox = of(v, "inbox");
    expect(inbox.status).toBe("not-run");
    expect(inbox.status === "not-run" && inbox.reason).toMatch(/^PostgreSQL \(DATABASE_URL\) unreachable: /);
    expect(of(v, "redis").status).toBe("measured");
  }, 60_000);
});

describe("a run's outcome over guarantees", () => {
  const expected = scenarioByName(NAME)!.expected;
  const summary: RunSummary = {
    published: STORM.events,
    records: STORM.events,
    deliveries: STORM.events,
    handlerCalls: STORM.events,
    deduplicated: 0,
    sideEffects: STORM.events,
    duplicateSideEffects: 0,
    lost: 0,
    dlq: 0,
  };
  const measured = (guarantee: GuaranteeRun["guarantee"], duplicateSideEffects: number): GuaranteeRun => ({
    guarantee,
    setup: "",
    status: "measured",
    crashes: 3,
    summary: { ...summary, duplicateSideEffects },
    countedBy: "",
  });

  it("is met when every measured guarantee shows what it promises", () => {
    const o = checkOutcome(expected, summary, [
      measured("redis", 7),
      measured("inbox", 0),
      measured("transactions", 0),
    ]);
    expect(o.met).toBe(true);
    expect(o.checks.every((c) => c.ok === true)).toBe(true);
  });

  it("is not met when the inbox performed a side effect twice, or Redis dedup showed no duplicate", () => {
    expect(checkOutcome(expected, summary, [measured("redis", 7), measured("inbox", 1)]).met).toBe(false);
    expect(checkOutcome(expected, summary, [measured("redis", 0)]).met).toBe(false);
  });

  it("a guarantee that failed while it ran fails its checks; with nothing measured the outcome is not met", () => {
    const failed: GuaranteeRun = { guarantee: "inbox", setup: "", status: "failed", reason: "lock timeout" };
    const o = checkOutcome(expected, summary, [measured("redis", 7), failed]);
    expect(o.met).toBe(false);
    expect(o.checks.find((c) => c.guarantee === "inbox")).toMatchObject({
      ok: false,
      notMeasured: "failed: lock timeout",
    });
    const none: GuaranteeRun = { guarantee: "redis", setup: "", status: "not-run", reason: "x" };
    expect(checkOutcome(expected, summary, [none]).met).toBe(false);
  });
});
