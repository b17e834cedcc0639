import { afterEach, describe, expect, it } from "vitest";
import { RECOMMENDED_SETUP } from "@/server/dedup";
import { createObserveContext } from "../context";
import { getCapacity } from "./capacity";
import { clearDeclaredHandlers, registerHandlers } from "../core/handler-registry";
import type { MetricsSource } from "../metrics/source";

/** A metrics source whose new-message rate for the handler is `rate.value`. */
function source(rate: { value: number }): MetricsSource {
  return {
    kind: "local",
    instant: async (q) =>
      q === "new_rate" ? [{ labels: { service: "svc", topic: "t", handler: "h" }, value: rate.value }] : [],
    range: async () => [],
    alerts: async () => [],
  };
}

afterEach(() => clearDeclaredHandlers());

describe("capacity: the 'wrong prefix' note needs a key count that saw the traffic", () => {
  it("the count taken before any traffic gives no note; a count started after the traffic does", async () => {
    registerHandlers([{ service: "svc", setup: { ...RECOMMENDED_SETUP, handler: "h" } }]);
    const rate = { value: 0 };
    const ctx = createObserveContext({ metrics: source(rate), redis: null, memory: () => [], answerTtlMs: 0 });
    await ctx.inspector!.run(); // the start-up count: no traffic yet
    rate.value = 5;
    const note = async () =>
      (await getCapacity(ctx)).handlers.find((h) => h.handler === "h")!.notes.some((n) => n.includes("wrong prefix"));
    expect(await note()).toBe(false);
    await new Promise((r) => setTimeout(r, 5));
    await ctx.inspector!.run(); // a count that started after the traffic was seen, still no key
    expect(await note()).toBe(true);
  });
});
