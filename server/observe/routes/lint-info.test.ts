/**
 * The lint of handlers the dashboard knows only from their `dedup_handler_info` (another process,
 * another language): what the library exports is read back, the lease rules follow the declared
 * heartbeat, the effect rules fire from the declared side effects and mode, and a declaration that
 * leaves them out is "not known" — never a pass.
 */
import { describe, expect, it } from "vitest";
import { handlerInfoLabels, type HandlerInfo } from "@/server/dedup";
import { CONTRACT_VERSION } from "@/names/contract";
import { declarationsFromInfo } from "../shared/fleet-info";
import { lintDeclared, undeclared } from "./lint";

/** What the library exports for a lease handler without a timeout on Redis, with `over` on top. */
function exported(over: Partial<HandlerInfo>): Record<string, string> {
  const base: HandlerInfo = {
    service: "billing",
    handler: "charge",
    topic: "orders",
    group: "billing.charge",
    prefix: "billing:dedup:charge",
    ttlMs: 86_400_000,
    ttlClass: "default",
    leaseMs: 60_000,
    timeoutMs: null,
    marking: "lease",
    failureMode: "open",
    stack: ["correlationId", "recoverer", "poisonQueue", "retry", "deduplicator"],
    repository: "redis",
    heartbeat: false,
    sideEffects: [],
    mode: "redis",
  };
  return handlerInfoLabels({ ...base, ...over }) as Record<string, string>;
}

/** The dashboard's lint of one series read from Prometheus: the rules that fired and what it says is not known. */
function lintOf(labels: Record<string, string>, p99: number | null = null) {
  const [d] = declarationsFromInfo([{ labels, value: 1 }]);
  return { rules: lintDeclared(d!, p99).map((f) => f.rule), unknown: undeclared(d!) };
}

describe("lint of a handler read from dedup_handler_info", () => {
  it("with heartbeat on, the lease rules do not warn; with it off they do", () => {
    expect(lintOf(exported({}), 45).rules).toEqual(["no-timeout", "handler-p99-near-lease"]);
    expect(lintOf(exported({ timeoutMs: 90_000 })).rules).toEqual(["timeout-not-below-lease"]);
    expect(lintOf(exported({ heartbeat: true }), 45)).toEqual({ rules: [], unknown: [] });
    expect(lintOf(exported({ heartbeat: true, timeoutMs: 90_000 })).rules).toEqual([]);
  });

  it("fires the effect rules from the declared side effects and mode, as in-process", () => {
    const db = exported({ heartbeat: true, sideEffects: ["postgres"] });
    expect(lintOf(db).rules).toEqual(["db-side-effect-without-inbox"]);
    // The inbox as the library exports it: no lease, and none needed (a crashed run's row rolls back).
    const inboxed = exported({
      sideEffects: ["postgres"],
      repository: "postgres-inbox",
      mode: "postgres-inbox",
      marking: "inbox",
      leaseMs: null,
      failureMode: "closed",
    });
    expect(lintOf(inboxed)).toEqual({ rules: [], unknown: [] });
    const out = exported({ heartbeat: true, sideEffects: ["kafka", "external"] });
    expect(lintOf(out).rules).toEqual(["kafka-output-without-transactions"]);
    expect(lintOf({ ...out, mode: "kafka-transactions", stack: "kafkaTransactions" }).rules).toEqual([]);
  });

  it("a foreign service whose info lacks the labels gets the effect rules as not known, not as a pass", () => {
    // A consumer of an earlier contract: no repository, heartbeat, side_effects nor mode.
    const foreign = {
      service: "payments",
      handler: "settle",
      topic: "settlements",
      ttl_ms: "86400000",
      lease_ms: "60000",
      timeout_ms: "20000",
      marking: "lease",
      failure_mode: "closed",
      stack: "correlationId,recoverer,poisonQueue,retry,deduplicator",
      runtime: "jvm",
      contract: CONTRACT_VERSION,
    };
    const l = lintOf(foreign);
    expect(l.rules).toEqual([]);
    expect(l.unknown).toEqual(
      expect.arrayContaining([
        expect.stringContaining("declares no side effects: not known whether db-side-effect-without-inbox"),
        expect.stringContaining("declares no heartbeat"),
      ]),
    );
    // Side effects declared but no mode: whether Kafka outputs are transactional is not known either.
    const kafka = lintOf({ ...foreign, side_effects: "kafka" });
    expect(kafka.rules).toEqual([]);
    expect(kafka.unknown).toContainEqual(expect.stringContaining("declares no mode"));
    // A kind the contract does not name makes the label unreadable, not "none".
    expect(lintOf({ ...foreign, side_effects: "postgres,s3" }).unknown).toContainEqual(
      expect.stringContaining("declares no side effects"),
    );
    expect(lintOf({ ...foreign, side_effects: "none" }).unknown).not.toContainEqual(
      expect.stringContaining("declares no side effects"),
    );
  });
});
