import { describe, expect, it } from "vitest";
import { lintHandler, modeOf, RECOMMENDED_SETUP, type HandlerSetup } from "../lint";
import { MINUTE_MS } from "../../../names/keys";

const rules = (s: Partial<HandlerSetup>) => lintHandler({ ...RECOMMENDED_SETUP, ...s }).map((f) => f.rule);

/** A Kafka-to-Kafka handler in the transactions mode, with key-mode fields set to what would warn if they applied. */
const TRANSACTIONS: Partial<HandlerSetup> = {
  mode: "kafka-transactions",
  stack: ["kafkaTransactions"],
  sideEffects: ["kafka"],
  ttlMs: MINUTE_MS,
  ttlClass: "critical",
  failureMode: "open",
  repository: "memory",
  replicas: 3,
  leaseMs: 0,
  timeoutMs: null,
};

describe("the lint decides by mode", () => {
  it("the PostgreSQL inbox table used as the Deduplicator's plain store is no inbox: a database write is warned", () => {
    // Its writes are autocommitted, outside the handler's transaction: mode custom, as its info says.
    expect(modeOf({ repository: "postgres-inbox" })).toBe("custom");
    const f = lintHandler({ ...RECOMMENDED_SETUP, repository: "postgres-inbox", sideEffects: ["postgres"] });
    expect(f.map((x) => x.rule)).toEqual(["db-side-effect-without-inbox"]);
    expect(f[0]!.message).toContain("a postgres-inbox store outside the handler's transaction");
    // The inbox middleware declares its mode: the row commits with the side effect.
    expect(rules({ repository: "postgres-inbox", mode: "postgres-inbox", sideEffects: ["postgres"] })).toEqual([]);
  });

  it("a transactions-mode handler gets no TTL, lease or store warning (none applies) and its Kafka output is covered", () => {
    expect(rules(TRANSACTIONS)).toEqual([]);
    // The same fields under the Deduplicator warn: the silence above is the mode's, not the values'.
    expect(rules({ ...TRANSACTIONS, mode: undefined, stack: RECOMMENDED_SETUP.stack })).toEqual(
      expect.arrayContaining([
        "ttl-below-minimum",
        "in-memory-with-replicas",
        "fail-open-critical",
        "no-timeout",
        "kafka-output-without-transactions",
      ]),
    );
  });

  it("a transactions-mode handler is warned for a database write the transaction does not cover, and a Deduplicator in it is an error", () => {
    const db = lintHandler({ ...RECOMMENDED_SETUP, ...TRANSACTIONS, sideEffects: ["kafka", "postgres"] });
    expect(db.map((x) => x.rule)).toEqual(["db-side-effect-without-inbox"]);
    expect(db[0]!.message).toContain("covers produced messages and offsets only");
    const dedup = lintHandler({ ...RECOMMENDED_SETUP, ...TRANSACTIONS, stack: ["retry", "deduplicator"] });
    expect(dedup.map((x) => [x.severity, x.rule])).toEqual([["error", "deduplicator-in-transactions"]]);
    expect(dedup[0]!.message).toContain("its outputs are never produced");
  });
});
