import { afterEach, describe, expect, it } from "vitest";
import { lintHandler, RECOMMENDED_SETUP } from "@/server/dedup";
import { registerDemoHandlers } from "@/server/startup";
import { declarationsFromInfo } from "../shared/fleet-info";
import {
  clearDeclaredHandlers,
  declaredHandlers,
  declaredPrefix,
  registerHandlers,
  setFleetInfo,
} from "./handler-registry";
import { lintDeclared } from "../routes/lint";

afterEach(() => clearDeclaredHandlers());

describe("handler registry", () => {
  it("is empty until something registers (the dashboard never reaches into the demo)", () => {
    expect(declaredHandlers()).toEqual([]);
  });

  it("holds the demo service's three handlers once start-up registers them, and they pass the library lint", async () => {
    await registerDemoHandlers({ mode: "embedded", SERVICE_NAME: "notification" });
    const d = declaredHandlers();
    expect(d.every((h) => h.setup.repository === "memory" && h.topic === "demo.events")).toBe(true);
    expect(d.map((h) => h.setup.handler).sort()).toEqual(["on-page-viewed", "on-review-created", "on-user-banned"]);
    expect(d.map((h) => h.setup.ttlClass).sort()).toEqual(["analytics", "critical", "default"]);
    for (const h of d) expect(lintHandler(h.setup)).toEqual([]);
    expect(declaredPrefix(d[0]!)).toMatch(/^[a-z0-9-]+:dedup:on-/);
  });

  it("serves what the consumer registers instead, replacing by service and handler", () => {
    registerHandlers([{ service: "billing", setup: { ...RECOMMENDED_SETUP, handler: "charge" } }]);
    registerHandlers([{ service: "billing", setup: { ...RECOMMENDED_SETUP, handler: "charge", ttlMs: 60_000 } }]);
    const d = declaredHandlers();
    expect(d).toHaveLength(1);
    expect(d[0]!.setup.ttlMs).toBe(60_000);
    expect(declaredPrefix(d[0]!)).toBe("billing:dedup:charge");
  });

  it("a handler's dedup_handler_info comes first, completed by this process's registration of it; a registration Prometheus has no info of stays as the fallback", () => {
    registerHandlers([
      {
        service: "billing",
        setup: { ...RECOMMENDED_SETUP, handler: "charge", repository: "memory", replicas: 3, ttlClass: "analytics" },
      },
      { service: "billing", setup: { ...RECOMMENDED_SETUP, handler: "refund" } },
    ]);
    setFleetInfo(
      declarationsFromInfo([
        {
          labels: {
            service: "billing",
            handler: "charge",
            topic: "orders",
            group: "billing-workers",
            ttl_ms: "300000",
            marking: "lease",
            lease_ms: "60000",
            timeout_ms: "30000",
          },
          value: 1,
        },
      ]),
    );
    const [charge, refund, ...rest] = declaredHandlers();
    expect(rest).toEqual([]);
    expect(charge).toMatchObject({
      service: "billing",
      source: "info",
      topic: "orders",
      groupId: "billing-workers",
      setup: { handler: "charge", ttlMs: 300_000, repository: "memory", replicas: 3, ttlClass: "analytics" },
    });
    expect(charge!.info?.ttlClass).toBe("analytics");
    expect(refund).toMatchObject({ service: "billing", setup: { handler: "refund" } });
    expect(refund!.source).toBeUndefined();
    // The info's window and the registration's store are both linted.
    expect(
      lintDeclared(charge!, null)
        .map((f) => f.rule)
        .sort(),
    ).toEqual(["in-memory-with-replicas", "ttl-below-minimum"]);
  });

  it("takes the store a handler's dedup_handler_info names (repository=postgres-inbox: the key browser reads its rows from the inbox table)", () => {
    registerHandlers([
      { service: "billing", setup: { ...RECOMMENDED_SETUP, handler: "invoice", repository: "redis" } },
    ]);
    setFleetInfo(
      declarationsFromInfo([
        {
          labels: { service: "billing", handler: "invoice", repository: "postgres-inbox", marking: "inbox" },
          value: 1,
        },
        { labels: { service: "billing", handler: "ledger" }, value: 1 },
      ]),
    );
    const byHandler = new Map(declaredHandlers().map((h) => [h.setup.handler, h.setup.repository]));
    expect(byHandler.get("invoice")).toBe("postgres-inbox");
    // An info that names no store keeps the assumption no rule flags.
    expect(byHandler.get("ledger")).toBe("redis");
  });
});
