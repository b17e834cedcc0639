/**
 * A Kafka-transactions handler as the dashboard reads it from `dedup_handler_info`: listed and linted
 * like any other, with what its mode has no value for said to not apply — never 0, never "declares
 * no TTL" — and no lease or TTL warning that cannot apply.
 */
import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { HANDLER_INFO_METRIC, TRANSACTIONS_DECLARATION } from "@/names/contract";
import { handlerInfoLabels } from "@/server/dedup";
import { transactionsInfo } from "@/server/transport/kafka-transactions-info";
import { declarationsFromInfo } from "../shared/fleet-info";
import { lintDeclared, notApplicable, undeclared } from "./lint";
import { ttlOf } from "./handlers-self";

/** The dashboard's declaration of the info the library exports for a relay in transactions mode. */
function declared(sideEffects?: ("kafka" | "postgres")[], stack?: string[]) {
  const o = {
    registry: new Registry(),
    service: "billing",
    ...(sideEffects ? { sideEffects } : {}),
    ...(stack ? { stack } : {}),
  };
  const labels = handlerInfoLabels(transactionsInfo(o, "billing.relay", { name: "relay", topic: "orders" }));
  const [d] = declarationsFromInfo([{ labels: labels as Record<string, string>, value: 1 }]);
  return d!;
}

describe("a Kafka-transactions handler read from dedup_handler_info", () => {
  it("lints clean with its Kafka output declared, and says what does not apply instead of leaving it unknown", () => {
    const d = declared(["kafka"]);
    expect(d.info?.mode).toBe("kafka-transactions");
    // A 2 min attempt p99 would be near any lease: there is none to lose.
    expect(lintDeclared(d, 120)).toEqual([]);
    expect(undeclared(d)).toEqual([]);
    expect(notApplicable(d)).toEqual(
      ["prefix", "ttl_ms", "ttl_class", "lease_ms", "repository", "heartbeat"].map((label) => ({
        label,
        text: "does not apply (transactions mode)",
      })),
    );
    expect(ttlOf(d, undefined)).toEqual({ status: "n/a", detail: TRANSACTIONS_DECLARATION.text });
  });

  it("without declared side effects the effect rules are not known; a database write and a Deduplicator are flagged", () => {
    expect(undeclared(declared())).toEqual([expect.stringContaining("declares no side effects")]);
    expect(lintDeclared(declared(["kafka", "postgres"]), null).map((f) => f.rule)).toEqual([
      "db-side-effect-without-inbox",
    ]);
    expect(lintDeclared(declared(["kafka"], ["retry", "deduplicator"]), null).map((f) => f.rule)).toEqual([
      "deduplicator-in-transactions",
    ]);
  });

  it("a foreign service that declares only marking=kafka-transaction is read as the transactions mode", () => {
    const [d] = declarationsFromInfo([
      {
        labels: {
          service: "pay",
          handler: "relay",
          topic: "t",
          marking: "kafka-transaction",
          failure_mode: "closed",
          stack: "relay",
          side_effects: "kafka",
        },
        value: 1,
      },
    ]);
    expect(lintDeclared(d!, null)).toEqual([]);
    expect(notApplicable(d!)).toHaveLength(TRANSACTIONS_DECLARATION.inapplicable.length);
    expect(undeclared(d!)).toEqual([]);
  });

  it(`its ${HANDLER_INFO_METRIC} leaves out the labels that do not apply, and only those`, () => {
    const labels = handlerInfoLabels(
      transactionsInfo({ registry: new Registry(), sideEffects: ["kafka"] }, "g", { name: "h", topic: "t" }),
    );
    for (const l of TRANSACTIONS_DECLARATION.inapplicable) expect(labels).not.toHaveProperty(l);
    expect(labels).toMatchObject({
      mode: "kafka-transactions",
      marking: "kafka-transaction",
      failure_mode: "closed",
      group: "g",
      side_effects: "kafka",
      stack: "kafkaTransactions",
    });
  });
});
