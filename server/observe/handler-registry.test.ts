import { afterEach, describe, expect, it } from "vitest";
import { lintHandler, RECOMMENDED_SETUP } from "@/server/dedup";
import { registerDemoHandlers } from "@/server/startup";
import { clearDeclaredHandlers, declaredHandlers, declaredPrefix, registerHandlers } from "./handler-registry";

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
});
