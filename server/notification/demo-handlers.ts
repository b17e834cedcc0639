/**
 * The demo service `notification`: its three handlers, one per TTL class of spec §3, as data.
 * Light on purpose (imports only the library's pure `lint` types and names), so start-up can
 * register the declared setups (`lintHandler`'s input) with the dashboard cheaply
 * (`registerDemoHandlers`, server/startup.ts).
 */
import type { HandlerSetup, FailureMode, RepositoryKind, SideEffect } from "@/server/dedup";
import { STACK_ORDER } from "@/names/stack";
import { TTL_POLICY, type TtlClass } from "@/names/keys";
import { handlerGroupId } from "@/names/kafka";

/** Partitions of the live demo's topic (`DEMO_TOPIC`, created by `npm run stack:up` or at demo start). */
export const DEMO_PARTITIONS = 6;

/**
 * The demo's `leaseMs`, declared here so that the setup the dashboard lints is the one the demo
 * runs (`DemoService` passes it to the Deduplicator): the library's default, 60 s.
 */
export const DEMO_LEASE_MS = 60_000;

/**
 * The demo's `timeoutMs` (a `timeout` inside the Deduplicator): half the lease, so a hung attempt
 * fails and releases its key long before the lease could expire. The demo's handlers take
 * milliseconds, so it never fires in normal operation; it costs one timer per attempt.
 */
export const DEMO_TIMEOUT_MS = DEMO_LEASE_MS / 2;

/**
 * What the demo's handlers do besides dedup: send a push (a call out; the side-effect store records
 * it), declared in `dedup_handler_info`'s `side_effects` so the effect rules know it.
 */
export const DEMO_SIDE_EFFECTS: readonly SideEffect[] = ["external"];

/** One demo handler. */
export interface DemoHandlerSpec {
  /** Handler name: `<service>:dedup:<name>` key prefix, metric label, consumer group `<service>.<name>`. */
  name: "on-review-created" | "on-user-banned" | "on-page-viewed";
  /** The `Event-Type` it takes (its Router `accept`, applied before the dedup pre-claim). */
  eventType: "review.created" | "user.banned" | "page.viewed";
  ttlClass: TtlClass;
  ttlMs: number;
  failureMode: FailureMode;
  /** Share of the demo traffic (sums to 1). */
  trafficShare: number;
}

/** The three demo handlers. */
export const DEMO_HANDLER_SPECS: readonly DemoHandlerSpec[] = [
  {
    name: "on-review-created",
    eventType: "review.created",
    ttlClass: "default",
    ttlMs: TTL_POLICY.defaultMs,
    failureMode: "open",
    trafficShare: 0.5,
  },
  {
    name: "on-user-banned",
    eventType: "user.banned",
    ttlClass: "critical",
    ttlMs: TTL_POLICY.criticalMs,
    failureMode: "closed",
    trafficShare: 0.1,
  },
  {
    name: "on-page-viewed",
    eventType: "page.viewed",
    ttlClass: "analytics",
    ttlMs: TTL_POLICY.analyticsMaxMs,
    failureMode: "open",
    trafficShare: 0.4,
  },
];

/**
 * The demo handlers' declared setups (`lintHandler` input) for a given store and replica count:
 * the spec's stack, UUID keys, lease marking, each handler's TTL class and failure mode.
 */
export function demoHandlerSetups(repository: RepositoryKind = "redis", replicas = 1): HandlerSetup[] {
  return DEMO_HANDLER_SPECS.map((s) => ({
    handler: s.name,
    stack: STACK_ORDER,
    keyFactory: "uuid",
    ttlMs: s.ttlMs,
    ttlClass: s.ttlClass,
    repository,
    replicas,
    marking: "lease",
    failureMode: s.failureMode,
    leaseMs: DEMO_LEASE_MS,
    timeoutMs: DEMO_TIMEOUT_MS,
    sideEffects: DEMO_SIDE_EFFECTS,
  }));
}

/**
 * The demo handlers' declared setups as deployed in real mode (Redis, one replica; the live
 * demo's current replica count is `demoService().handlerSetups()`). All three pass the lint.
 */
export const DEMO_HANDLERS: readonly HandlerSetup[] = demoHandlerSetups("redis", 1);

/** The consumer groups of the demo's handlers for `service` (`<service>.<handler>`), in spec order. */
export function demoGroupIds(service: string): string[] {
  return DEMO_HANDLER_SPECS.map((h) => handlerGroupId(service, h.name));
}
