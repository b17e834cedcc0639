import { describe, expect, it } from "vitest";
import { demoEffectsSchema, demoFaultsSchema, demoSourcesSchema } from "@/lib/api/demo";
import { dedupMetrics } from "@/server/dedup";
import { config } from "@/server/config";
import { appRegistry } from "@/server/registry";
import { errorBodySchema } from "@/lib/api/common";
import { embeddedConfigPerTest, LOCAL_REQUEST_HEADERS, useConfig } from "@/server/testing/app-config";
import { GET as getSources, PUT as putSources } from "./sources/route";
import { GET as getFaults, PUT as putFaults } from "./faults/route";
import { GET as getEffects } from "./effects/route";

/** Route handlers of the live-demo switches, called directly, in embedded mode, as from this machine. */
const put = (fn: (r: Request) => Promise<Response>, body: unknown, headers: Record<string, string> = {}) =>
  fn(
    new Request("http://localhost:3000/api/demo/x", {
      method: "PUT",
      headers: { "content-type": "application/json", ...LOCAL_REQUEST_HEADERS, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );

embeddedConfigPerTest();

describe("demo API routes", () => {
  it("GET/PUT /api/demo/sources: a partial patch switches one source and keeps the others", async () => {
    const before = demoSourcesSchema.parse(
      await (await getSources(new Request("http://localhost/api/demo/sources"))).json(),
    );
    expect(before.retryOnError.enabled).toBe(false);
    const res = await put(putSources, {
      retryOnError: { enabled: true, rate: 0.3 },
      forwarderRepublish: { delayMs: 1000 },
    });
    expect(res.status).toBe(200);
    const after = demoSourcesSchema.parse(await res.json());
    expect(after.retryOnError).toEqual({ enabled: true, rate: 0.3 });
    expect(after.forwarderRepublish).toEqual({ ...before.forwarderRepublish, delayMs: 1000 });
    expect(after.rebalance).toEqual(before.rebalance);
    expect(
      demoSourcesSchema.parse(await (await getSources(new Request("http://localhost/api/demo/sources"))).json())
        .retryOnError.enabled,
    ).toBe(true);
  });

  it("PUT /api/demo/sources rejects out-of-range values, unknown fields and non-JSON with 400 { error, detail }", async () => {
    for (const body of [{ retryOnError: { rate: 2 } }, { rebalance: { replicas: 9 } }, { bogus: true }, "not json"]) {
      const res = await put(putSources, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const e = errorBodySchema.parse(await res.json());
      expect(e.error).toBe("bad_request");
      expect(e.detail.length).toBeGreaterThan(5);
    }
  });

  it("GET/PUT /api/demo/faults: latency and error rate apply; a Redis cut-off in embedded mode is a 400 that says why", async () => {
    const res = await put(putFaults, { latencyMs: 30, errorRate: 0.1 });
    expect(res.status).toBe(200);
    expect(demoFaultsSchema.parse(await res.json())).toMatchObject({
      latencyMs: 30,
      errorRate: 0.1,
      redisCutoff: { available: false, active: false },
    });
    const cut = await put(putFaults, { redisCutoffMs: 5000 });
    expect(cut.status).toBe(400);
    expect(errorBodySchema.parse(await cut.json()).detail).toMatch(/real mode/);
    expect(
      demoFaultsSchema.parse(await (await getFaults(new Request("http://localhost/api/demo/faults"))).json()).latencyMs,
    ).toBe(30);
    expect((await put(putFaults, { errorRate: -1 })).status).toBe(400);
  });

  it("with WORKSHOP_TOKEN set, PUT without the token → 401", async () => {
    useConfig({ WORKSHOP_TOKEN: "token-of-at-least-16" });
    expect((await put(putFaults, { latencyMs: 0 })).status).toBe(401);
    expect((await put(putSources, { traffic: { enabled: false } })).status).toBe(401);
    expect(
      (await put(putSources, { traffic: { enabled: false } }, { authorization: "Bearer token-of-at-least-16" })).status,
    ).toBe(200);
  });

  it("GET /api/demo/effects: the retries of switch (a) — failed attempts and released keys — as this process counted them, other services' apart", async () => {
    const effects = async () =>
      demoEffectsSchema.parse(await (await getEffects(new Request("http://localhost/api/demo/effects"))).json());
    const before = await effects();
    const m = dedupMetrics(appRegistry());
    const ours = { service: config().SERVICE_NAME, topic: "demo.events", handler: "on-review-created" };
    m.released.inc(ours, 3);
    m.released.inc({ ...ours, service: "someone-else" }, 5);
    const [, failed] = m.handlerTime.handler(ours.service, ours.handler);
    failed(0.002);
    failed(0.003);
    m.checkDuration.observe({ service: ours.service }, 0.2);
    const after = await effects();
    expect(after.service).toBe(config().SERVICE_NAME);
    expect(after.counts.released - before.counts.released).toBe(3);
    expect(after.counts.handlerErrors - before.counts.handlerErrors).toBe(2);
    expect(after.checkBuckets.find((b) => b.le === null)!.count).toBeGreaterThan(0);
  });
});
