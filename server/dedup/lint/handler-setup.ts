/**
 * What the lint reads of a handler: its declared setup (`HandlerSetup`, also what the dashboard
 * shows) and what the dashboard measured of it (`HandlerObserved`). Types only.
 */
import type { Marking } from "../deduplicator/deduplicator-options";
import type { TtlClass } from "../../../names/keys";
import type { StackName } from "../../../names/stack";
import type { InfoMode, InfoSideEffect } from "../../../names/contract";
import type { FailureMode, RepositoryKind } from "../repository/repository";

/** A middleware name of the stack (lint input); other names are allowed and ignored by the order rules. */
export type StackEntry = StackName | (string & {});

/** A kind of side effect a handler declares: a PostgreSQL write, produced Kafka messages, anything else (push, HTTP). */
export type SideEffect = InfoSideEffect;

/**
 * What makes a handler's effects once — the contract's `mode`: the Deduplicator on its store
 * (`redis`, `memory`, `custom`), the PostgreSQL inbox (`postgres-inbox`) or Kafka transactions
 * (`kafka-transactions`: outputs and offsets in one transaction).
 */
export type HandlerMode = InfoMode;

/** How a handler's dedup key is made. Only `uuid` is right (spec §2). */
export type KeyFactoryKind = "uuid" | "payload-hash" | "business-key" | "correlation-id";

/**
 * A handler's declared setup: the lint input, also what the dashboard shows. Under mode
 * `kafka-transactions` no key is written: `ttlMs`, `ttlClass`, `repository`, `marking`, `failureMode`,
 * `leaseMs` and `heartbeat` do not apply, and the rules that read them do not run.
 */
export interface HandlerSetup {
  /** Handler name. */
  handler: string;
  /** Middleware names, outermost first (see `describeStack`). */
  stack: readonly StackEntry[];
  keyFactory: KeyFactoryKind;
  /** The dedup window in ms. */
  ttlMs: number;
  ttlClass: TtlClass;
  repository: RepositoryKind;
  /** Consumer replicas sharing the topic. */
  replicas: number;
  marking: Marking;
  failureMode: FailureMode;
  /** The Deduplicator's `leaseMs` (how long a claim protects a run in progress). */
  leaseMs: number;
  /** The `timeout` middleware's `timeoutMs` inside the Deduplicator (`defaultStack`'s `timeoutMs`); `null` = none. */
  timeoutMs: number | null;
  /** The kinds of side effect the handler has. @default [] (not declared: the effect rules stay silent) */
  sideEffects?: readonly SideEffect[];
  /**
   * What makes its effects once. @default the Deduplicator's on `repository` (names/contract.ts
   * `storeMode`: the inbox table used as a plain store is `custom`, not `postgres-inbox`)
   */
  mode?: HandlerMode;
  /** The Deduplicator renews the lease while the handler runs (its `heartbeat`): the lease rules do not apply. @default false */
  heartbeat?: boolean;
}

/** What the dashboard measured of a handler, for the rules that need more than its declared setup. */
export interface HandlerObserved {
  /** p99 of one handler attempt over the last hour, seconds (`handler_execution_time_seconds`); `null` = no data. */
  handlerP99Seconds?: number | null;
}
