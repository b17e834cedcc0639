import { describe, expect, it } from "vitest";
import type { GuaranteeRun, RunSummary } from "@/lib/api/workshop";
import { guaranteeDetail, guaranteeHeadline } from "./guarantee-words";

const summary = (duplicateSideEffects: number): RunSummary => ({
  published: 60,
  records: 60,
  deliveries: 90,
  handlerCalls: 75,
  deduplicated: 12,
  sideEffects: 60 + duplicateSideEffects,
  duplicateSideEffects,
  lost: 0,
  dlq: 0,
});

describe("a guarantee tile says what was measured, and why nothing was when it was not run", () => {
  it("a measured guarantee shows its duplicate side effects, 0 included", () => {
    const g: GuaranteeRun = {
      guarantee: "inbox",
      setup: "PostgreSQL inbox",
      status: "measured",
      crashes: 3,
      summary: summary(0),
      countedBy: "rows",
    };
    expect(guaranteeHeadline(g)).toBe("0");
    expect(guaranteeDetail(g)).toBe("60 side effects of 75 handler calls · 0 lost · 3 crashes · 12 deduplicated");
  });

  it("a guarantee that did not run shows its reason, never a figure", () => {
    const g: GuaranteeRun = {
      guarantee: "transactions",
      setup: "Kafka transactions",
      status: "not-run",
      reason: "the embedded broker has no Kafka transactions (set KAFKA_BROKERS for real Kafka)",
    };
    expect(guaranteeHeadline(g)).toBe(
      "not run: the embedded broker has no Kafka transactions (set KAFKA_BROKERS for real Kafka)",
    );
    expect(guaranteeHeadline(g)).not.toMatch(/^\d/);
  });

  it("a failed or running guarantee says so instead of a figure", () => {
    expect(guaranteeHeadline({ guarantee: "redis", setup: "", status: "failed", reason: "timed out" })).toBe(
      "not measured: timed out",
    );
    expect(guaranteeHeadline({ guarantee: "redis", setup: "", status: "running", crashes: 1 })).toBe(
      "running… 1 crash so far",
    );
  });
});
