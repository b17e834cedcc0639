/**
 * The dashboard's answers for a Kafka-transactions handler known only from its scraped
 * `dedup_handler_info`: the lint lists it clean with what does not apply said so (never a 0 TTL or
 * lease), the handler page says its window does not apply, and the capacity projection leaves out
 * a handler that writes no key.
 */
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { lintResponseSchema } from "@/lib/api/lint";
import { handlerSelfResponseSchema } from "@/lib/api/handlers";
import { TRANSACTIONS_DECLARATION } from "@/names/contract";
import { exportHandlerInfo } from "@/server/dedup";
import { transactionsInfo } from "@/server/transport/kafka-transactions-info";
import { createObserveContext } from "../context";
import { clearDeclaredHandlers } from "../core/handler-registry";
import { LocalSource } from "../metrics/local";
import { getCapacity } from "./capacity";
import { getHandlerSelf } from "./handlers-self";
import { getLint } from "./lint";
import { getOverview } from "./overview";

afterEach(() => clearDeclaredHandlers());

/** A context whose metrics hold the info the library exports for the relay `billing/relay` in transactions mode. */
async function contextWithRelay() {
  const registry = new Registry();
  const o = { registry, service: "billing", sideEffects: ["kafka" as const] };
  exportHandlerInfo(registry, transactionsInfo(o, "billing.relay", { name: "relay", topic: "orders" }));
  const src = new LocalSource(registry, { intervalMs: 1000 });
  await src.sample();
  return createObserveContext({ metrics: src, redis: null, answerTtlMs: 0 });
}

describe("a Kafka-transactions handler on the dashboard", () => {
  it("GET /api/lint lists it from its info, clean, its window and lease null and said not to apply", async () => {
    const l = lintResponseSchema.parse(await getLint(await contextWithRelay()));
    if (l.declared.status !== "ok") throw new Error("declared lint unavailable");
    expect(l.declared.handlers).toEqual([
      expect.objectContaining({
        service: "billing",
        handler: "relay",
        source: "info",
        ttlMs: null,
        ttlClass: null,
        leaseMs: null,
        unknown: [],
        findings: [],
      }),
    ]);
    expect(l.declared.handlers[0]!.notApplicable).toEqual(
      expect.arrayContaining([
        { label: "ttl_ms", text: TRANSACTIONS_DECLARATION.text },
        { label: "lease_ms", text: TRANSACTIONS_DECLARATION.text },
      ]),
    );
  });

  it("its handler page says the window and lease do not apply and shows its marking; capacity has no row for it", async () => {
    const ctx = await contextWithRelay();
    const self = handlerSelfResponseSchema.parse(await getHandlerSelf(ctx, "billing", "relay"));
    expect(self.ttl).toEqual({ status: "n/a", detail: TRANSACTIONS_DECLARATION.text });
    expect(self.window).toEqual({ status: "n/a", detail: TRANSACTIONS_DECLARATION.text });
    expect(self.lease).toEqual({ status: "ok", ms: null, text: TRANSACTIONS_DECLARATION.text });
    expect(self.marking).toEqual({ status: "ok", value: "kafka-transaction" });
    expect(self.group).toEqual({ id: "billing.relay", source: "declared" });
    expect(self.lint).toMatchObject({ status: "ok", findings: [], unknown: [] });
    expect((await getCapacity(ctx)).handlers.map((h) => h.handler)).not.toContain("relay");
  });

  it("the overview lists it without a TTL class it does not have", async () => {
    const ctx = await contextWithRelay();
    await getLint(ctx); // the overview reads the fleet's info as the other routes last read it
    const o = await getOverview(ctx, "15m");
    expect(o.handlers.find((h) => h.handler === "relay")).toMatchObject({ service: "billing", ttlClass: null });
  });
});
