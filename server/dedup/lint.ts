/**
 * `lintHandler`: checks a handler's declared dedup setup against the spec (§2, §3, §4, §6, §9, §10).
 * Pure and isomorphic (imports only `./names` and types), so the dashboard can import it in the browser.
 * The stack order it checks against is `STACK_ORDER` of `./names`, the one `defaultStack` builds.
 */
import { DAY_MS, MINUTE_MS, TTL_POLICY } from "../../names/keys";
import { STACK_ORDER } from "../../names/stack";
import { INFO_MODE } from "../../names/contract";
import { effectRules, modeOf } from "./lint/effect-rules";

import type { HandlerObserved, HandlerSetup } from "./lint/handler-setup";
import type { Add, LintFinding } from "./lint/finding";

export type { LintFinding, LintRule, LintSeverity } from "./lint/finding";

export { modeOf } from "./lint/effect-rules";
export type {
  HandlerMode,
  HandlerObserved,
  HandlerSetup,
  KeyFactoryKind,
  SideEffect,
  StackEntry,
} from "./lint/handler-setup";

/** The spec's recommended setup for an ordinary handler (what the lint is silent on). */
export const RECOMMENDED_SETUP: HandlerSetup = {
  handler: "on-review-created",
  stack: STACK_ORDER,
  keyFactory: "uuid",
  ttlMs: TTL_POLICY.defaultMs,
  ttlClass: "default",
  repository: "redis",
  replicas: 2,
  marking: "lease",
  failureMode: "open",
  // DEFAULT_LEASE_MS (deduplicator-options.ts; not imported: this module stays free of runtime code).
  leaseMs: 60_000,
  timeoutMs: 30_000,
};

function fmt(ms: number): string {
  if (ms >= DAY_MS) return `${+(ms / DAY_MS).toFixed(2)} d`;
  if (ms >= 60 * MINUTE_MS) return `${+(ms / (60 * MINUTE_MS)).toFixed(2)} h`;
  if (ms >= MINUTE_MS) return `${+(ms / MINUTE_MS).toFixed(2)} min`;
  return `${+(ms / 1000).toFixed(2)} s`;
}

/** The TTL against the policy (spec §3). */
function ttlRules({ ttlMs, ttlClass }: HandlerSetup, add: Add): void {
  if (ttlMs < TTL_POLICY.minimumMs) {
    add(
      "error",
      "ttl-below-minimum",
      "§3",
      `ttlMs ${fmt(ttlMs)} is below 10 min: a 5-attempt retry plus a rebalance outlives the key and the repeat is processed again. Use 24 h (critical: 7 d).`,
    );
  } else if (ttlMs < TTL_POLICY.warnBelowMs && ttlClass !== "analytics") {
    add(
      "warning",
      "ttl-below-hour",
      "§3",
      `ttlMs ${fmt(ttlMs)} is below 1 h for a ${ttlClass} handler; only high-volume analytics may go that low. Use 24 h.`,
    );
  }
  if (ttlClass === "critical" && ttlMs < TTL_POLICY.criticalMs) {
    add(
      "warning",
      "critical-ttl-below-7d",
      "§3",
      `critical handler with ttlMs ${fmt(ttlMs)}: a repeat after a long consumer pause must not pass; use 7 d.`,
    );
  }
}

/** The stack's order: Deduplicator last, inside Retry and PoisonQueue; PoisonQueue outside Retry. */
function stackRules(setup: HandlerSetup, add: Add): void {
  const { stack } = setup;
  const d = stack.indexOf("deduplicator");
  const r = stack.indexOf("retry");
  const p = stack.indexOf("poisonQueue");
  if (modeOf(setup) === INFO_MODE.kafkaTransactions) {
    // The transaction is the guarantee; a Deduplicator inside it is what loses outputs.
    if (d >= 0)
      add(
        "error",
        "deduplicator-in-transactions",
        "§11",
        "a Deduplicator in a Kafka-transactions handler marks done before the chunk's transaction commits: when the transaction aborts, the chunk's redelivery finds the mark and is swallowed, and its outputs are never produced. Leave the Deduplicator out: the transaction makes the outputs once.",
      );
  } else if (d < 0) {
    add(
      "warning",
      "no-deduplicator",
      "§9.1",
      "no deduplicator in the stack: every repeat reaches the handler, which must then be fully idempotent.",
    );
  } else {
    if (r >= 0 && d < r) {
      add(
        "error",
        "dedup-outside-retry",
        "§10",
        "deduplicator sits outside (before) Retry: the key spans all attempts, and a message that exhausted its retries is marked done, so its DLQ replay is swallowed. Put it last.",
      );
    }
    if (p >= 0 && d < p) {
      add(
        "error",
        "dedup-outside-poison-queue",
        "§10",
        "deduplicator sits outside (before) PoisonQueue: PoisonQueue acks a poisoned message, so it counts as done and its replay from the DLQ within the window is swallowed. Put it last.",
      );
    }
    if (setup.marking === "naive" && r >= 0 && d > r) {
      add(
        "error",
        "naive-marking-inside-retry",
        "§10",
        'naive marking inside Retry: the key is never released, so the retry after a failed first attempt is swallowed as a duplicate and the message is acked unprocessed. Use marking "lease".',
      );
    }
  }
  if (p >= 0 && r >= 0 && p > r) {
    add(
      "warning",
      "poison-queue-inside-retry",
      "§2",
      "PoisonQueue sits inside Retry: it poisons on the first failure and Retry never runs (watermill#645). Put PoisonQueue outside Retry.",
    );
  }
}

/** The key factory: Message.uuid, never a correlation id, a business key or a payload hash. */
function keyRules(setup: HandlerSetup, add: Add): void {
  if (setup.keyFactory === "correlation-id") {
    add(
      "error",
      "key-correlation-id",
      "§6",
      "keyed by Correlation-Id: every event of a chain shares it, so the second and third events are silently swallowed. Key by Message.uuid.",
    );
  } else if (setup.keyFactory === "business-key") {
    add(
      "error",
      "key-business-key",
      "§9.2",
      "keyed by a business key: a second legitimate event for the same entity is swallowed (a per-key window is a rate limiter, not dedup). Key by Message.uuid.",
    );
  } else if (setup.keyFactory === "payload-hash") {
    add(
      "warning",
      "key-payload-hash",
      "§2",
      "keyed by a payload hash (Watermill's default): two distinct events with equal payloads collide. Key by Message.uuid.",
    );
  }
}

/** The store and its failure mode against the deployment (replicas, criticality). */
function storeRules(setup: HandlerSetup, add: Add): void {
  const { ttlClass } = setup;
  if (setup.repository === "memory" && setup.replicas > 1) {
    add(
      "error",
      "in-memory-with-replicas",
      "§9.4",
      `in-memory repository with ${setup.replicas} replicas: after a rebalance the next replica's map is empty and the repeat is processed again. Use Redis.`,
    );
  }
  if (setup.failureMode === "open" && ttlClass === "critical") {
    add(
      "warning",
      "fail-open-critical",
      "§4",
      "critical handler is fail-open: during a Redis outage repeats pass unchecked. Use failClosed(repo) unless the handler is idempotent on its own.",
    );
  }
}

/**
 * Lease marking without a heartbeat: a timeout below the lease, and the measured handler p99 well
 * below it. With the heartbeat the claim is renewed while the handler runs (bounded by `maxLeaseMs`).
 */
function leaseRules(setup: HandlerSetup, observed: HandlerObserved, add: Add): void {
  if (
    modeOf(setup) === INFO_MODE.kafkaTransactions ||
    setup.heartbeat === true ||
    setup.marking !== "lease" ||
    !setup.stack.includes("deduplicator")
  )
    return;
  if (setup.timeoutMs === null) {
    add(
      "warning",
      "no-timeout",
      "§10",
      `no timeout bounds an attempt: a handler that hangs outlives its ${fmt(setup.leaseMs)} lease, and another consumer runs the message too. Add timeout(ms) below the lease (defaultStack's timeoutMs), or the lease heartbeat.`,
    );
  } else if (setup.timeoutMs >= setup.leaseMs) {
    add(
      "warning",
      "timeout-not-below-lease",
      "§10",
      `timeout ${fmt(setup.timeoutMs)} is not below the ${fmt(setup.leaseMs)} lease: the lease expires first, and another consumer runs the message while this attempt still works. Set timeoutMs below leaseMs (half of it leaves room for the store's round trips), or turn the lease heartbeat on.`,
    );
  }
  const p99 = observed.handlerP99Seconds;
  if (p99 != null && p99 * 1000 > setup.leaseMs / 2) {
    add(
      "warning",
      "handler-p99-near-lease",
      "§10",
      `handler p99 over the last hour is ${fmt(p99 * 1000)}, more than half the ${fmt(setup.leaseMs)} lease: a lease takeover is near (another consumer runs the message while this one still works; deduplication_lease_lost_total counts it). Make the handler faster, raise leaseMs, turn the lease heartbeat on, or bound it with a timeout below the lease.`,
    );
  }
}

/**
 * Lints one handler setup, and what was measured of it when given (`observed`); returns the
 * findings (empty = as the spec recommends).
 */
export function lintHandler(setup: HandlerSetup, observed: HandlerObserved = {}): LintFinding[] {
  const f: LintFinding[] = [];
  const add: Add = (severity, rule, specSection, message) => void f.push({ severity, rule, message, specSection });
  // No key, no window, no store: the TTL and store rules cannot apply to the transactions mode.
  const keyed = modeOf(setup) !== INFO_MODE.kafkaTransactions;
  if (keyed) ttlRules(setup, add);
  stackRules(setup, add);
  keyRules(setup, add);
  if (keyed) storeRules(setup, add);
  leaseRules(setup, observed, add);
  effectRules(setup, add);
  return f;
}
