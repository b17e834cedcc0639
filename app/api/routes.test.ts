/**
 * The routes' GET functions called directly (no server) with adversarial query strings, on an
 * embedded context (local metrics, no Redis): every answer is a 4xx with `{ error, detail }` or a
 * normal answer that parses with its response schema — never a 5xx. Key routes with a real Redis
 * are covered by routes.integration.test.ts.
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { GET as alertsGET } from "@/app/api/alerts/route";
import { GET as capacityGET } from "@/app/api/capacity/route";
import { GET as handlersGET } from "@/app/api/handlers/route";
import { GET as lookupGET } from "@/app/api/keys/lookup/route";
import { GET as keysGET } from "@/app/api/keys/route";
import { GET as lintGET } from "@/app/api/lint/route";
import { GET as overviewGET } from "@/app/api/overview/route";
import { GET as seriesGET } from "@/app/api/series/route";
import { alertsResponseSchema } from "@/lib/api/alerts";
import { capacityResponseSchema } from "@/lib/api/capacity";
import { errorBodySchema } from "@/lib/api/common";
import { handlersResponseSchema } from "@/lib/api/handlers";
import { lintResponseSchema } from "@/lib/api/lint";
import { overviewResponseSchema } from "@/lib/api/overview";
import { seriesResponseSchema } from "@/lib/api/series";
import { GET as hotKeysGET } from "@/app/api/hot-keys/route";
import { hotKeysResponseSchema } from "@/lib/api/hot-keys";
import { dedupRecorder, RECOMMENDED_SETUP } from "@/server/dedup";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { clearDeclaredHandlers, registerHandlers } from "@/server/observe/core/handler-registry";
import { LocalSource } from "@/server/observe/metrics/local";

const ADVERSARIAL = [
  "",
  "*",
  "?",
  "[a-z]",
  "\\",
  "../../etc/passwd",
  "%2e%2e%2f%2e%2e%2f",
  "ünïcødé-🦄",
  "%00",
  "%0d%0aX-Injected:%201",
  "1e309",
  "-1",
  "99999999999999999999999999",
  "NaN",
  "Infinity",
  "0x10",
  "a".repeat(5000),
  "sum(rate(x[5m]))",
  '"}) or vector(1) #',
];

const PARAMS = [
  "range",
  "metric",
  "service",
  "handler",
  "step",
  "refresh",
  "mode",
  "prefix",
  "cursor",
  "count",
  "uuid",
  "query",
  "__proto__",
  "constructor",
];

let now = Date.now() - 20_000;
let src: LocalSource;

beforeAll(async () => {
  const registry = new Registry();
  const rec = dedupRecorder(registry, "notification");
  src = new LocalSource(registry, { intervalMs: 1000 }, () => now);
  await src.sample();
  for (let i = 0; i < 10; i++) {
    for (let j = 0; j < 50; j++) rec.result("demo.events", "on-review-created", j < 10 ? "deduplicated" : "success");
    rec.check("on-review-created", performance.now(), 0.003);
    now += 1000;
    await src.sample();
  }
  registerHandlers([
    { service: "notification", topic: "demo.events", setup: { ...RECOMMENDED_SETUP, ttlMs: 30 * 60_000 } },
  ]);
  setObserveContext(createObserveContext({ metrics: src, redis: null }));
});

afterAll(() => {
  setObserveContext(null);
  clearDeclaredHandlers();
});

const req = (path: string) => new Request(`http://localhost${path}`);

async function call(get: (r: Request) => Promise<Response>, path: string) {
  const res = await get(req(path));
  return { status: res.status, body: (await res.json()) as unknown };
}

const ROUTES: Array<{
  name: string;
  get: (r: Request) => Promise<Response>;
  base: string;
  schema: z.ZodType;
  redisOnly?: boolean;
}> = [
  { name: "overview", get: overviewGET, base: "/api/overview", schema: overviewResponseSchema },
  { name: "handlers", get: handlersGET, base: "/api/handlers", schema: handlersResponseSchema },
  { name: "series", get: seriesGET, base: "/api/series?metric=duplicate_ratio", schema: seriesResponseSchema },
  { name: "alerts", get: alertsGET, base: "/api/alerts", schema: alertsResponseSchema },
  { name: "capacity", get: capacityGET, base: "/api/capacity", schema: capacityResponseSchema },
  { name: "lint", get: lintGET, base: "/api/lint", schema: lintResponseSchema },
  {
    name: "hot-keys",
    get: hotKeysGET,
    base: "/api/hot-keys?service=notification&handler=on-review-created",
    schema: hotKeysResponseSchema,
  },
  {
    name: "keys",
    get: keysGET,
    base: "/api/keys?prefix=notification:dedup:on-review-created",
    schema: errorBodySchema,
    redisOnly: true,
  },
  {
    name: "lookup",
    get: lookupGET,
    base: "/api/keys/lookup?uuid=01JD8X3Q0000000000000000AB",
    schema: errorBodySchema,
    redisOnly: true,
  },
];

describe("routes with adversarial parameters (embedded context)", () => {
  for (const r of ROUTES) {
    it(`${r.name}: every parameter × every hostile value → 4xx with {error, detail} or a schema-valid answer`, async () => {
      for (const p of PARAMS) {
        for (const v of ADVERSARIAL) {
          const sep = r.base.includes("?") ? "&" : "?";
          // Hostile value first, so it wins over the base's own value of the same name.
          const path = r.base.includes("?")
            ? `${r.base.split("?")[0]}?${p}=${encodeURIComponent(v)}&${r.base.split("?")[1]}`
            : `${r.base}${sep}${p}=${encodeURIComponent(v)}`;
          const { status, body } = await call(r.get, path);
          expect(status, `${path} → ${status} ${JSON.stringify(body).slice(0, 200)}`).toBeLessThan(
            500 + (r.redisOnly ? 4 : 0),
          );
          if (status >= 400) expect(errorBodySchema.safeParse(body).success, path).toBe(true);
          else
            expect(
              r.schema.safeParse(body).success,
              `${path}: ${JSON.stringify(r.schema.safeParse(body).error?.issues?.slice(0, 2))}`,
            ).toBe(true);
          if (r.redisOnly && status >= 500) expect(status).toBe(503);
        }
      }
    });
  }

  it("says 400 and names the parameter for a bad value", async () => {
    const { status, body } = await call(seriesGET, "/api/series?metric=up&range=1y");
    expect(status).toBe(400);
    expect((body as { error: string; detail: string }).error).toBe("bad_request");
    expect((body as { detail: string }).detail).toMatch(/metric/);
    expect((await call(keysGET, "/api/keys?prefix=a&count=100000")).status).toBe(400);
    expect((await call(lookupGET, "/api/keys/lookup?uuid=../../x")).status).toBe(400);
  });

  it("overview answers with the local metrics and marks Redis as not configured", async () => {
    const { status, body } = await call(overviewGET, "/api/overview?range=15m&junk=1");
    expect(status).toBe(200);
    const o = overviewResponseSchema.parse(body);
    expect(o.source).toBe("local");
    expect(o.upstream.store.status).toBe("not-configured");
    const h = o.handlers.find((x) => x.handler === "on-review-created")!;
    expect(h.duplicateRatio).toEqual({ status: "ok", value: expect.closeTo(0.2, 5) });
    // "now" (the last sampling interval) beside the 5-min figure: the same steady traffic, the same ratio.
    expect(h.now).toMatchObject({ status: "ok", duplicateRatio: expect.closeTo(0.2, 5) });
    expect(h.keys.status).toBe("unavailable");
    expect(h.alerts.map((a) => `${a.alert}:${a.state}`)).toContain("DedupDuplicateRateHigh:pending");
    expect(o.thresholds.duplicateRatio).toBe(0.1);
  });

  it("capacity projects keys = new (non-deduplicated) messages/s × the filled share of the declared TTL", async () => {
    const c = capacityResponseSchema.parse((await call(capacityGET, "/api/capacity")).body);
    const h = c.handlers.find((x) => x.prefix === "notification:dedup:on-review-created")!;
    expect(h.ttlSource).toBe("declared");
    expect(h.ttlMs).toBe(30 * 60_000);
    // 50 deliveries/s of which 10 deduplicated → 40 new keys/s, each kept 30 min.
    expect(h.newRate).toEqual({ status: "ok", value: expect.closeTo(40, 5) });
    // Embedded: keys live in this process, so the window has filled for as long as it has run
    // (a few seconds of 30 min): only that share is projected, not 40 × 1800.
    expect(h.window?.source).toBe("process-start");
    expect(h.window!.filled).toBeLessThan(1);
    expect(h.window!.validAt).not.toBeNull();
    expect(h.projectedKeys).toBe(Math.round(40 * (h.window!.ageMs / 1000)));
    expect(h.projectedKeys!).toBeLessThan(40 * 1800);
    expect(h.measured.status).toBe("unavailable");
    expect(h.gapRatio).toBeNull();
  });

  it("lint reports the library findings of a declared handler", async () => {
    const l = lintResponseSchema.parse((await call(lintGET, "/api/lint")).body);
    expect(l.declared.status).toBe("ok");
    if (l.declared.status !== "ok") return;
    expect(l.declared.handlers[0]!.findings.map((f) => f.rule)).toContain("ttl-below-hour");
    expect(l.observed.status).toBe("unavailable");
  });

  it("series filters by label without ever putting the value into PromQL", async () => {
    const s = seriesResponseSchema.parse(
      (await call(seriesGET, "/api/series?metric=duplicate_ratio&range=5m&handler=on-review-created")).body,
    );
    expect(s.data.status).toBe("ok");
    if (s.data.status !== "ok") return;
    expect(s.data.series).toHaveLength(1);
    expect(s.thresholds.map((t) => t.value)).toEqual([0.1, 0.01]);
    const none = seriesResponseSchema.parse(
      (await call(seriesGET, "/api/series?metric=duplicate_ratio&handler=%22%7D%20or%20vector(1)")).body,
    );
    expect(none.data.status === "ok" && none.data.series).toEqual([]);
  });
});
