import { afterEach, describe, expect, it } from "vitest";
import { RECOMMENDED_SETUP } from "@/server/dedup";
import { clearDeclaredHandlers, registerHandlers } from "../core/handler-registry";
import { serviceOfTopic } from "./payload-access";

afterEach(() => clearDeclaredHandlers());

describe("the service a record's masking asks about", () => {
  it("is the one service whose handlers consume the topic (its DLQ topic: the origin's); none or several: unknown, so only an app-wide unmasked counts", () => {
    registerHandlers([
      { service: "billing", topic: "billing.events", setup: { ...RECOMMENDED_SETUP, handler: "charge" } },
      { service: "billing", topic: "billing.events", setup: { ...RECOMMENDED_SETUP, handler: "refund" } },
      { service: "billing", topic: "shared.events", setup: { ...RECOMMENDED_SETUP, handler: "audit" } },
      { service: "search", topic: "shared.events", setup: { ...RECOMMENDED_SETUP, handler: "index" } },
    ]);
    expect(serviceOfTopic("billing.events")).toBe("billing");
    expect(serviceOfTopic("billing.events.dlq")).toBe("billing");
    expect(serviceOfTopic("shared.events")).toBeUndefined();
    expect(serviceOfTopic("nobody.reads.this")).toBeUndefined();
  });
});
