import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorBodySchema } from "@/lib/api/common";
import { handlerSelfResponseSchema } from "@/lib/api/handlers";
import { dedupRecorder, RECOMMENDED_SETUP } from "@/server/dedup";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { clearDeclaredHandlers, registerHandlers } from "@/server/observe/core/handler-registry";
import { LocalSource } from "@/server/observe/metrics/local";
import { GET } from "./route";

const call = async (service: string, handler: string) => {
  const res = await GET(
    new Request(`http://localhost/api/handlers/${encodeURIComponent(service)}/${encodeURIComponent(handler)}`),
    { params: Promise.resolve({ service, handler }) },
  );
  return { status: res.status, body: (await res.json()) as unknown };
};

beforeAll(async () => {
  const registry = new Registry();
  const rec = dedupRecorder(registry, "notification");
  const src = new LocalSource(registry, { intervalMs: 1000 });
  rec.result("demo.events", "on-review-created", "success");
  await src.sample();
  registerHandlers([
    {
      service: "notification",
      topic: "demo.events",
      setup: { ...RECOMMENDED_SETUP, handler: "on-review-created", ttlClass: "critical", ttlMs: 7 * 86_400_000 },
    },
  ]);
  setObserveContext(createObserveContext({ metrics: src, redis: null }));
});

afterAll(() => {
  setObserveContext(null);
  clearDeclaredHandlers();
});

describe("GET /api/handlers/{service}/{handler} (embedded context)", () => {
  it("a registered handler (the embedded fallback) shows its declared class, window, lease and lint; no Kafka is said, not blanked", async () => {
    const { status, body } = await call("notification", "on-review-created");
    expect(status).toBe(200);
    const d = handlerSelfResponseSchema.parse(body);
    expect(d.declaration).toMatchObject({ status: "ok", source: "registry" });
    expect(d.ttl).toMatchObject({ status: "ok", ms: 7 * 86_400_000, ttlClass: "critical", classSource: "declared" });
    expect(d.lease).toMatchObject({ status: "ok", ms: RECOMMENDED_SETUP.leaseMs });
    // A critical handler that is fail-open (the recommended setup's mode) is linted for it.
    expect(d.lint.status === "ok" && d.lint.findings.map((f) => f.rule)).toEqual(["fail-open-critical"]);
    expect(d.topic).toEqual({ status: "ok", value: "demo.events", source: "declared" });
    expect(d.consumerGroup.status).not.toBe("ok");
  });

  it("a name that is not a label value is a 400 { error, detail }; any other name a schema-valid answer, never a 5xx", async () => {
    for (const [s, h] of [
      ["a b", "x"],
      ["x", "a/b"],
      ["x", "a".repeat(300)],
      ["ünïcødé", "x"],
    ] as const) {
      const { status, body } = await call(s, h);
      expect(status, `${s}/${h}`).toBe(400);
      expect(errorBodySchema.safeParse(body).success).toBe(true);
    }
    for (const [s, h] of [
      ["nobody", "nothing"],
      ["__proto__", "constructor"],
    ] as const) {
      const { status, body } = await call(s, h);
      expect(status, `${s}/${h}`).toBe(200);
      const d = handlerSelfResponseSchema.parse(body);
      expect(d.declaration).toEqual({
        status: "unknown",
        needs: "dedup_handler_info",
        detail: "declares nothing: export dedup_handler_info",
      });
      expect(d.ttl).toEqual({
        status: "unknown",
        needs: "dedup_handler_info (ttl_ms)",
        detail: "declares no TTL: export dedup_handler_info",
      });
    }
  });
});
