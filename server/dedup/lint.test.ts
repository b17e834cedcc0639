import { describe, expect, it } from "vitest";
import { lintHandler, RECOMMENDED_SETUP, type HandlerSetup, type LintRule } from "./lint";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../names/keys";

const rules = (s: Partial<HandlerSetup>) => lintHandler({ ...RECOMMENDED_SETUP, ...s }).map((f) => f.rule);

describe("lintHandler", () => {
  it("is silent on the spec's recommended setups (default, critical fail-closed 7 d, analytics 1 h)", () => {
    expect(lintHandler(RECOMMENDED_SETUP)).toEqual([]);
    expect(rules({ ttlClass: "critical", ttlMs: 7 * DAY_MS, failureMode: "closed" })).toEqual([]);
    expect(rules({ ttlClass: "analytics", ttlMs: HOUR_MS })).toEqual([]);
    expect(rules({ ttlClass: "analytics", ttlMs: 30 * MINUTE_MS })).toEqual([]);
    expect(rules({ failureMode: "closed" })).toEqual([]); // fail-closed on a non-critical handler is fine
    expect(rules({ repository: "memory", replicas: 1 })).toEqual([]);
  });

  const cases: Array<[LintRule, Partial<HandlerSetup>, "error" | "warning", string]> = [
    ["ttl-below-minimum", { ttlMs: 5 * MINUTE_MS }, "error", "§3"],
    ["ttl-below-hour", { ttlMs: 30 * MINUTE_MS }, "warning", "§3"],
    ["critical-ttl-below-7d", { ttlClass: "critical", ttlMs: DAY_MS, failureMode: "closed" }, "warning", "§3"],
    ["no-deduplicator", { stack: ["correlationId", "recoverer", "poisonQueue", "retry"] }, "warning", "§9.1"],
    [
      "dedup-outside-retry",
      { stack: ["correlationId", "recoverer", "poisonQueue", "deduplicator", "retry"] },
      "error",
      "§10",
    ],
    [
      "dedup-outside-poison-queue",
      { stack: ["correlationId", "recoverer", "deduplicator", "poisonQueue"] },
      "error",
      "§10",
    ],
    [
      "poison-queue-inside-retry",
      { stack: ["correlationId", "recoverer", "retry", "poisonQueue", "deduplicator"] },
      "warning",
      "§2",
    ],
    ["naive-marking-inside-retry", { marking: "naive" }, "error", "§10"],
    ["key-correlation-id", { keyFactory: "correlation-id" }, "error", "§6"],
    ["key-business-key", { keyFactory: "business-key" }, "error", "§9.2"],
    ["key-payload-hash", { keyFactory: "payload-hash" }, "warning", "§2"],
    ["in-memory-with-replicas", { repository: "memory", replicas: 2 }, "error", "§9.4"],
    ["fail-open-critical", { ttlClass: "critical", ttlMs: 7 * DAY_MS, failureMode: "open" }, "warning", "§4"],
    ["no-timeout", { timeoutMs: null }, "warning", "§10"],
    ["timeout-not-below-lease", { timeoutMs: 60_000, leaseMs: 60_000 }, "warning", "§10"],
    ["db-side-effect-without-inbox", { sideEffects: ["postgres"] }, "warning", "§11"],
    ["kafka-output-without-transactions", { sideEffects: ["kafka"] }, "warning", "§11"],
  ];

  it.each(cases)("%s fires on a bad setup with its severity and spec section", (rule, bad, severity, section) => {
    const findings = lintHandler({ ...RECOMMENDED_SETUP, ...bad });
    expect(findings.map((f) => f.rule)).toEqual([rule]);
    expect(findings[0]).toMatchObject({ severity, specSection: section });
    expect(findings[0]!.message.length).toBeGreaterThan(20);
  });

  it("does not warn below 1 h for analytics but still errors below 10 min", () => {
    expect(rules({ ttlClass: "analytics", ttlMs: 5 * MINUTE_MS })).toEqual(["ttl-below-minimum"]);
  });

  it("the anti-dedup-before-retry setup of the workshop gets both order findings", () => {
    expect(rules({ stack: ["correlationId", "recoverer", "deduplicator", "poisonQueue", "retry"] })).toEqual([
      "dedup-outside-retry",
      "dedup-outside-poison-queue",
    ]);
  });

  it("naive marking outside Retry is reported for its order, not as the lost retry", () => {
    expect(
      rules({ marking: "naive", stack: ["correlationId", "recoverer", "poisonQueue", "deduplicator", "retry"] }),
    ).toEqual(["dedup-outside-retry"]);
  });

  it("handler-p99-near-lease warns when the measured p99 of the last hour passes half the lease, and only then", () => {
    const at = (p99: number | null, setup: Partial<HandlerSetup> = {}) =>
      lintHandler({ ...RECOMMENDED_SETUP, ...setup }, { handlerP99Seconds: p99 }).map((f) => f.rule);
    expect(at(30)).toEqual([]); // exactly half: not yet
    expect(at(31)).toEqual(["handler-p99-near-lease"]);
    expect(at(null)).toEqual([]);
    expect(lintHandler(RECOMMENDED_SETUP)).toEqual([]);
    expect(at(3, { leaseMs: 5_000, timeoutMs: 2_000 })).toEqual(["handler-p99-near-lease"]);
    const f = lintHandler(RECOMMENDED_SETUP, { handlerP99Seconds: 45 })[0]!;
    expect(f).toMatchObject({ severity: "warning", specSection: "§10" });
    expect(f.message).toContain("a lease takeover is near");
    expect(f.message).toContain("45 s");
    expect(f.message).toContain("1 min lease");
    // Without a lease there is nothing to take over.
    expect(at(45, { marking: "release" })).toEqual([]);
  });

  it("the timeout rules: below the lease is silent, at or above it warns, none warns; without a lease there is nothing to outlive", () => {
    expect(rules({ timeoutMs: 59_999 })).toEqual([]);
    expect(rules({ timeoutMs: 90_000 })).toEqual(["timeout-not-below-lease"]);
    expect(rules({ timeoutMs: 10_000, leaseMs: 5_000 })).toEqual(["timeout-not-below-lease"]);
    expect(rules({ timeoutMs: null, marking: "release" })).toEqual([]);
    expect(rules({ timeoutMs: null, stack: ["correlationId", "recoverer", "poisonQueue", "retry"] })).toEqual([
      "no-deduplicator",
    ]);
    expect(lintHandler({ ...RECOMMENDED_SETUP, timeoutMs: 90_000 })[0]!.message).toContain(
      "1.5 min is not below the 1 min lease",
    );
  });

  it("with the lease heartbeat on, the lease rules are silent: the claim is renewed for as long as the handler runs", () => {
    const slow = { handlerP99Seconds: 45 };
    const lease = (setup: Partial<HandlerSetup>) =>
      lintHandler({ ...RECOMMENDED_SETUP, ...setup }, slow).map((f) => f.rule);
    // The same three setups warn without it…
    expect(lease({ timeoutMs: null })).toEqual(["no-timeout", "handler-p99-near-lease"]);
    expect(lease({ timeoutMs: 90_000 })).toEqual(["timeout-not-below-lease", "handler-p99-near-lease"]);
    // …and are silent with it, while the other rules still run.
    expect(lease({ timeoutMs: null, heartbeat: true })).toEqual([]);
    expect(lease({ timeoutMs: 90_000, heartbeat: true })).toEqual([]);
    expect(lease({ heartbeat: true, ttlMs: 5 * MINUTE_MS, sideEffects: ["postgres"] })).toEqual([
      "ttl-below-minimum",
      "db-side-effect-without-inbox",
    ]);
  });

  it("a PostgreSQL side effect is flagged unless the inbox middleware makes it once", () => {
    expect(rules({ sideEffects: ["postgres"], repository: "memory", replicas: 1 })).toEqual([
      "db-side-effect-without-inbox",
    ]);
    // The Deduplicator marks done after the handler's transaction on any store: two writes.
    expect(rules({ sideEffects: ["postgres"], repository: "custom" })).toEqual(["db-side-effect-without-inbox"]);
    expect(rules({ sideEffects: ["postgres"], mode: "postgres-inbox" })).toEqual([]);
    // A handler without a database write is silent.
    expect(rules({ sideEffects: ["external"] })).toEqual([]);
    expect(rules({ sideEffects: [] })).toEqual([]);
    const f = lintHandler({ ...RECOMMENDED_SETUP, sideEffects: ["postgres"] })[0]!;
    expect(f.message).toContain("dedups in redis");
    expect(f.message).toContain("PostgreSQL inbox");
  });

  it("Kafka outputs are flagged unless the handler runs in the transactions mode, whatever its other effects", () => {
    expect(rules({ sideEffects: ["kafka"], mode: "kafka-transactions", stack: ["kafkaTransactions"] })).toEqual([]);
    expect(rules({ sideEffects: ["kafka"], mode: "redis" })).toEqual(["kafka-output-without-transactions"]);
    expect(rules({ sideEffects: ["postgres", "kafka"] })).toEqual([
      "db-side-effect-without-inbox",
      "kafka-output-without-transactions",
    ]);
    expect(lintHandler({ ...RECOMMENDED_SETUP, sideEffects: ["kafka"] })[0]!.message).toContain(
      'Use mode "kafka-transactions"',
    );
  });
});
