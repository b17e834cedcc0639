/**
 * `GET /healthz` and `GET /readyz` as a probe calls them, against a Redis of the test's own that it
 * stops and starts again on the same port: readiness is 503 naming Redis while it is down, 200 once
 * it answers again; liveness stays 200 throughout. The proxy lets both through whatever the `Host`.
 */
import { NextRequest } from "next/server";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxy } from "@/proxy";
import { setAuditStore } from "@/server/audit";
import { parseConfig } from "@/server/config";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { GET as healthz } from "../healthz/route";
import { GET as readyz } from "./route";

type G = typeof globalThis & { __dedupHealthConfig?: unknown; __dedupHealthAnswer?: unknown };
const g = globalThis as G;
const savedConfig = g.__dedupHealthConfig;
const PORT = 19_731;

let srv: OwnRedis | undefined;
let client: RedisLike;

/** `/readyz`'s answer now (the health answer is shared for 2 s: forget it so each call probes). */
async function ready(): Promise<{ status: number; body: { status: string; role?: string; reasons: string[] } }> {
  delete g.__dedupHealthAnswer;
  const res = await readyz();
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  srv = await startOwnRedis({ port: PORT });
  // Only Redis is configured: Kafka and Prometheus are "not configured", never a reason.
  g.__dedupHealthConfig = parseConfig({ REDIS_URL: srv.url });
  client = createObserveRedis({ url: srv.url });
  setObserveContext(createObserveContext({ metrics: new LocalSource(new Registry()), redis: client }));
}, 30_000);

afterAll(async () => {
  setObserveContext(null);
  g.__dedupHealthConfig = savedConfig;
  delete g.__dedupHealthAnswer;
  client?.disconnect();
  await srv?.stop();
});

describe("GET /readyz and GET /healthz", () => {
  it("ready with Redis up; 503 naming Redis while it is down (healthz still 200); ready again once it is back", async () => {
    const up = await ready();
    expect(up).toEqual({ status: 200, body: { status: "ready", role: "single", reasons: [] } });

    await srv?.stop();
    srv = undefined;
    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.body.status).toBe("not-ready");
    expect(down.body.reasons).toHaveLength(1);
    expect(down.body.reasons[0]).toMatch(/^redis: down — /);
    // The reason names the failure, not the address.
    expect(down.body.reasons[0]).not.toContain(String(PORT));
    const live = await healthz();
    expect([live.status, await live.json()]).toEqual([200, { status: "ok" }]);

    srv = await startOwnRedis({ port: PORT });
    const deadline = Date.now() + 10_000;
    let again = await ready();
    while (again.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      again = await ready();
    }
    expect(again).toEqual({ status: 200, body: { status: "ready", role: "single", reasons: [] } });
  }, 20_000);

  it("503 naming PostgreSQL when DATABASE_URL does not answer, without its address or password", async () => {
    const url = `postgres://hd-user:hd-secret-pw@127.0.0.1:${PORT + 1}/hd_db`;
    g.__dedupHealthConfig = parseConfig({ REDIS_URL: srv!.url, DATABASE_URL: url });
    await setAuditStore(null);
    try {
      const r = await ready();
      expect(r.status).toBe(503);
      expect(r.body.reasons).toHaveLength(1);
      expect(r.body.reasons[0]).toMatch(/^postgres: down — /);
      for (const secret of ["hd-secret-pw", String(PORT + 1), "hd-user"])
        expect(r.body.reasons[0]).not.toContain(secret);
    } finally {
      await setAuditStore(null);
      g.__dedupHealthConfig = parseConfig({ REDIS_URL: srv!.url });
    }
  }, 20_000);

  it("the proxy lets the probes through with any Host, and still refuses a foreign Host elsewhere", () => {
    const call = (path: string, method = "GET") =>
      proxy(new NextRequest(`http://app-1:3000${path}`, { method, headers: { host: "app-1:3000" } }));
    for (const path of ["/healthz", "/readyz"]) {
      expect(call(path).status, path).toBe(200);
      expect(call(path).headers.get("x-middleware-next"), path).toBe("1");
      expect(call(path, "HEAD").headers.get("x-middleware-next"), path).toBe("1");
    }
    expect(call("/api/health").status).toBe(403);
    expect(call("/").status).toBe(403);
    expect(call("/healthz/x").status).toBe(403);
  });
});
