/**
 * The self-description every consumer exports (docs/CONTRACT.md), written once: the
 * `dedup_handler_info` gauge, its labels and their values.
 * **Imports nothing**, so the library, the dashboard and the browser read the same names.
 */

/** The values of a record of names. */
type ValueOf<T> = T[keyof T];

/** Every value of a record of names, in its order (names/dedup.ts `valuesOf`: this file imports nothing). */
function valuesOf<T extends Record<string, string>>(names: T): readonly ValueOf<T>[] {
  return Object.values(names) as ValueOf<T>[];
}

/**
 * The version of docs/CONTRACT.md a consumer follows: the `contract` label of
 * {@link HANDLER_INFO_METRIC}. A change that makes a conforming consumer non-conforming bumps it.
 */
export const CONTRACT_VERSION = "1";

/**
 * The self-description gauge: `dedup_handler_info{…} = 1` for every handler a consumer runs, in any
 * language. The dashboard lints, projects capacity, joins lag by the declared group and looks UUIDs
 * up under the declared prefix from it; the library exports it for every handler `defaultStack` builds.
 */
export const HANDLER_INFO_METRIC = "dedup_handler_info";

/**
 * Label names of {@link HANDLER_INFO_METRIC}. `timeout_ms` (the attempt's time limit) and
 * `lease_ms` (marking `lease` only) are absent when there is none; `ttl_class` when not declared
 * (the dashboard then infers it and says so); `stack` is the middleware names outermost first,
 * joined by {@link INFO_STACK_SEPARATOR}. `heartbeat` ({@link INFO_HEARTBEAT}), `side_effects`
 * ({@link INFO_SIDE_EFFECT} joined by {@link INFO_STACK_SEPARATOR}, {@link INFO_NO_SIDE_EFFECTS} for
 * none) and `mode` ({@link INFO_MODE}) are absent when not declared: the rules that need them say
 * "not known" rather than pass.
 */
export const HANDLER_INFO_LABEL = {
  service: "service",
  handler: "handler",
  topic: "topic",
  group: "group",
  prefix: "prefix",
  ttlMs: "ttl_ms",
  ttlClass: "ttl_class",
  leaseMs: "lease_ms",
  timeoutMs: "timeout_ms",
  marking: "marking",
  failureMode: "failure_mode",
  stack: "stack",
  runtime: "runtime",
  contract: "contract",
  repository: "repository",
  heartbeat: "heartbeat",
  sideEffects: "side_effects",
  mode: "mode",
} as const;

/** Every label name of {@link HANDLER_INFO_METRIC}, in the contract's order. */
export const HANDLER_INFO_LABELS = valuesOf(HANDLER_INFO_LABEL);

/** One label name of {@link HANDLER_INFO_METRIC}. */
export type HandlerInfoLabel = ValueOf<typeof HANDLER_INFO_LABEL>;

/**
 * The `marking` values of {@link HANDLER_INFO_METRIC}: `lease` (claim `processing:<token>` for the
 * lease, `done…` after the handler, released on failure), `release` (`SET NX PX ttl` before the
 * handler, deleted on failure), `before` (`SET NX` before the handler, never released: the design
 * note's, the library's `naive` marking), `inbox` (a row `done:<position>#<fingerprint>` inserted in
 * the handler's own database transaction: committed with its side effect or rolled back with it),
 * `kafka-transaction` (no key at all: the consumed offset is committed in the Kafka transaction of
 * the handler's produced messages; see {@link TRANSACTIONS_DECLARATION}).
 */
export const INFO_MARKING = {
  lease: "lease",
  release: "release",
  before: "before",
  inbox: "inbox",
  kafkaTransaction: "kafka-transaction",
} as const;

/** A `marking` value of {@link HANDLER_INFO_METRIC}. */
export type InfoMarking = ValueOf<typeof INFO_MARKING>;

/** Every {@link InfoMarking}. */
export const INFO_MARKINGS = valuesOf(INFO_MARKING);

/** The `failure_mode` values of {@link HANDLER_INFO_METRIC} (spec §4). */
export const INFO_FAILURE_MODE = { open: "open", closed: "closed" } as const;

/** Every `failure_mode` value. */
export const INFO_FAILURE_MODES = valuesOf(INFO_FAILURE_MODE);

/** Separator of the middleware names in the `stack` label (`correlationId,recoverer,…`). */
export const INFO_STACK_SEPARATOR = ",";

/**
 * The `heartbeat` values of {@link HANDLER_INFO_METRIC}: `on` when the handler's lease is renewed
 * while it runs (the library's `heartbeat` option, lease marking), so an attempt longer than the
 * lease keeps its claim; `off` when the lease alone protects a run.
 */
export const INFO_HEARTBEAT = { on: "on", off: "off" } as const;

/** Every `heartbeat` value. */
export const INFO_HEARTBEATS = valuesOf(INFO_HEARTBEAT);

/**
 * The kinds of side effect a handler declares in `side_effects` (joined by
 * {@link INFO_STACK_SEPARATOR}): a PostgreSQL write, produced Kafka messages, anything else outside
 * the dedup store (a push, an HTTP call, another store's write).
 */
export const INFO_SIDE_EFFECT = { postgres: "postgres", kafka: "kafka", external: "external" } as const;

/** A kind of side effect of `side_effects`. */
export type InfoSideEffect = ValueOf<typeof INFO_SIDE_EFFECT>;

/** Every kind of side effect. */
export const INFO_SIDE_EFFECTS = valuesOf(INFO_SIDE_EFFECT);

/** The `side_effects` value of a handler that declares it has none (an absent label: not declared). */
export const INFO_NO_SIDE_EFFECTS = "none";

/**
 * The `mode` values of {@link HANDLER_INFO_METRIC}: what makes the handler's effects once — the
 * Deduplicator on its store (`redis`, `memory`, `custom`: the `repository`), the PostgreSQL inbox
 * (`postgres-inbox`: the claim row in the side effect's own transaction), or Kafka transactions
 * (`kafka-transactions`: produced messages and consumed offsets committed together).
 */
export const INFO_MODE = {
  redis: "redis",
  memory: "memory",
  custom: "custom",
  postgresInbox: "postgres-inbox",
  kafkaTransactions: "kafka-transactions",
} as const;

/** A `mode` value of {@link HANDLER_INFO_METRIC}. */
export type InfoMode = ValueOf<typeof INFO_MODE>;

/** Every {@link InfoMode}. */
export const INFO_MODES = valuesOf(INFO_MODE);

/**
 * The `mode` of a Deduplicator on a store of `kind` (its `repository`): the store's name — but the
 * inbox table used as a plain store (autocommit, outside the handler's transaction) is no inbox:
 * `custom`. Only the inbox middleware declares `postgres-inbox`.
 */
export function storeMode(kind: "redis" | "memory" | "postgres-inbox" | "custom"): InfoMode {
  return kind === "postgres-inbox" ? INFO_MODE.custom : kind;
}

/**
 * What a handler in the Kafka-transactions mode declares, one entry: `mode` and `marking`, and the
 * labels it leaves out because they **do not apply** — no key is written (`prefix`, `repository`),
 * nothing expires (`ttl_ms`, `ttl_class`: the committed offset is the record of processing, for
 * good), nothing is leased or renewed (`lease_ms`, `heartbeat`). A reader shows each of them as
 * `text`, never as 0, "none" or "not declared".
 */
export const TRANSACTIONS_DECLARATION = {
  mode: INFO_MODE.kafkaTransactions,
  marking: INFO_MARKING.kafkaTransaction,
  inapplicable: [
    HANDLER_INFO_LABEL.prefix,
    HANDLER_INFO_LABEL.ttlMs,
    HANDLER_INFO_LABEL.ttlClass,
    HANDLER_INFO_LABEL.leaseMs,
    HANDLER_INFO_LABEL.repository,
    HANDLER_INFO_LABEL.heartbeat,
  ] as readonly HandlerInfoLabel[],
  text: "does not apply (transactions mode)",
} as const;
