import { describe, expect, it } from "vitest";
import { runCreatedSchema, runViewSchema, scenarioListSchema } from "@/lib/api/workshop";
import { errorBodySchema } from "@/lib/api/common";
import { embeddedConfigPerTest, LOCAL_REQUEST_HEADERS, useConfig } from "@/server/testing/app-config";
import { consumerRuntime } from "@/server/runtime";
import { sideEffectCounters } from "@/server/notification/side-effects";
import { GET as metricsGET } from "@/app/api/metrics/route";
import { GET as overviewGET } from "@/app/api/overview/route";
import { overviewResponseSchema } from "@/lib/api/overview";
import { WORKSHOP_SERVICE } from "@/names/product";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { appRegistry, workshopRegistry } from "@/server/registry";
import { GET as listScenarios } from "./scenarios/route";
import { POST as startRun } from "./scenarios/[name]/runs/route";
import { GET as getRun } from "./runs/[runId]/route";

/** Route handlers of the workshop API, called directly, in embedded mode (no services), as from this machine. */
const post = (name: string, headers: Record<string, string> = {}, query = "") =>
  startRun(
    new Request(`http://localhost:3000/api/workshop/scenarios/${name}/runs${query}`, {
      method: "POST",
      headers: { ...LOCAL_REQUEST_HEADERS, ...headers },
    }),
    { params: Promise.resolve({ name }) },
  );
const run = (runId: string) =>
  getRun(new Request(`http://localhost:3000/api/workshop/runs/${runId}`), { params: Promise.resolve({ runId }) });

embeddedConfigPerTest();

describe("workshop API routes", () => {
  it("GET /api/workshop/scenarios lists the 14 scenarios with their expected outcomes", async () => {
    const res = await listScenarios(new Request("http://localhost/api/workshop/scenarios"));
    expect(res.status).toBe(200);
    const body = scenarioListSchema.parse(await res.json());
    expect(body.mode).toBe("embedded");
    expect(body.scenarios).toHaveLength(14);
    expect(
      body.scenarios.find((s) => s.name === "anti-naive-marking")?.expected.checks.some((c) => c.field === "lost"),
    ).toBe(true);
  });

  it("POST an unknown scenario → 404, a malformed name → 400, both { error, detail }", async () => {
    const r404 = await post("no-such-scenario");
    expect(r404.status).toBe(404);
    expect(errorBodySchema.parse(await r404.json()).error).toBe("not_found");
    const r400 = await post("../../etc");
    expect(r400.status).toBe(400);
    expect(errorBodySchema.parse(await r400.json())).toMatchObject({ error: "bad_request" });
  });

  it("POST ?pace=narrated starts a run at that pace (its view says so and names its own topics); another pace → 400", async () => {
    const res = await post("anti-business-key", {}, "?pace=narrated");
    expect(res.status).toBe(202);
    const { runId } = runCreatedSchema.parse(await res.json());
    const v = runViewSchema.parse(await (await run(runId)).json());
    expect(v.pace).toBe("narrated");
    expect(v.topics.dlq).toBe(`workshop.anti-business-key.${runId}.dlq`);
    await consumerRuntime().workshop.wait(runId);
    const bad = await post("anti-business-key", {}, "?pace=slow-motion");
    expect(bad.status).toBe(400);
    expect(errorBodySchema.parse(await bad.json()).detail).toMatch(/pace/);
  }, 60_000);

  it("POST runs a scenario (202 { runId }), a second POST while it runs → 409 with the running runId, the run ends done with a timeline", async () => {
    const first = await post("forwarder-republish");
    expect(first.status).toBe(202);
    const { runId } = runCreatedSchema.parse(await first.json());
    const second = await post("forwarder-republish");
    expect(second.status).toBe(409);
    expect(errorBodySchema.parse(await second.json())).toMatchObject({ error: "conflict", runId });
    const running = runViewSchema.parse(await (await run(runId)).json());
    expect(running.status).toBe("running");
    await consumerRuntime().workshop.wait(runId);
    const done = runViewSchema.parse(await (await run(runId)).json());
    expect(done.status).toBe("done");
    expect(
      done.outcome?.met,
      JSON.stringify({ s: done.summary, o: done.outcome?.checks.filter((c) => !c.ok), e: done.error }),
    ).toBe(true);
    expect(done.timeline.length).toBeGreaterThan(0);
    expect(done.timeline.some((e) => e.verdict === "deduplicated")).toBe(true);
    // Finished: the same scenario can run again.
    const again = await post("forwarder-republish");
    expect(again.status).toBe(202);
    await consumerRuntime().workshop.wait(runCreatedSchema.parse(await again.json()).runId);
  }, 30_000);

  it("an anti-pattern run counts its duplicate pushes on the workshop's registry, not on the production one", async () => {
    const res = await post("anti-no-dedup");
    expect(res.status).toBe(202);
    const v = await consumerRuntime().workshop.wait(runCreatedSchema.parse(await res.json()).runId);
    const dupOf = async (r: typeof appRegistry) =>
      (await sideEffectCounters(r()).duplicate.get()).values.find((x) => x.labels.handler === "anti-no-dedup")?.value ??
      0;
    expect(await dupOf(workshopRegistry)).toBe(v.summary.duplicateSideEffects);
    expect(v.summary.duplicateSideEffects).toBeGreaterThan(0);
    expect(await dupOf(appRegistry)).toBe(0);
  }, 30_000);

  it("after 3 runs, /api/metrics has no series of a run and /api/overview lists no workshop handler; the run view shows the run's own counters", async () => {
    // The Overview's embedded metrics: the production registry, sampled every 100 ms during the runs.
    const src = new LocalSource(appRegistry(), { intervalMs: 100 });
    await src.sample();
    const sampler = setInterval(() => void src.sample(), 100);
    setObserveContext(createObserveContext({ metrics: src, redis: null }));
    try {
      const runIds: string[] = [];
      const views = [];
      for (const name of ["forwarder-republish", "retry-on-error", "anti-correlation-id"]) {
        const res = await post(name);
        expect(res.status).toBe(202);
        const { runId } = runCreatedSchema.parse(await res.json());
        runIds.push(runId);
        views.push(await consumerRuntime().workshop.wait(runId));
      }
      await src.sample();
      const exposition = await (await metricsGET()).text();
      for (const id of runIds) expect(exposition).not.toContain(id);
      expect(exposition).not.toContain(`service="${WORKSHOP_SERVICE}"`);
      const overview = overviewResponseSchema.parse(
        await (await overviewGET(new Request("http://localhost/api/overview"))).json(),
      );
      expect(overview.handlers.filter((h) => h.service === WORKSHOP_SERVICE)).toEqual([]);
      // The run's own counters: on the run view, from the workshop registry, then gone from it.
      const fwd = runViewSchema.parse(await (await run(runIds[0]!)).json());
      const dedup = fwd.series.filter((x) => x.name === "messages_deduplicated_total").reduce((a, x) => a + x.value, 0);
      expect(dedup).toBe(views[0]!.summary.deduplicated);
      expect(dedup).toBeGreaterThan(0);
      const left = JSON.stringify(await workshopRegistry().getMetricsAsJSON());
      for (const id of runIds) expect(left).not.toContain(id);
    } finally {
      clearInterval(sampler);
      setObserveContext(null);
    }
  }, 60_000);

  it("GET an unknown run → 404, a malformed run id → 400", async () => {
    expect((await run("abcdef123456")).status).toBe(404);
    const bad = await run("bad id!");
    expect(bad.status).toBe(400);
    expect(errorBodySchema.parse(await bad.json()).error).toBe("bad_request");
  });

  it("with WORKSHOP_TOKEN set, POST needs the bearer token: 401 without it, 202 with it", async () => {
    useConfig({ WORKSHOP_TOKEN: "token-of-at-least-16" });
    const denied = await post("anti-correlation-id");
    expect(denied.status).toBe(401);
    expect(errorBodySchema.parse(await denied.json()).error).toBe("unauthorized");
    const ok = await post("anti-correlation-id", { authorization: "Bearer token-of-at-least-16" });
    expect(ok.status).toBe(202);
    await consumerRuntime().workshop.wait(runCreatedSchema.parse(await ok.json()).runId);
  }, 30_000);
});
