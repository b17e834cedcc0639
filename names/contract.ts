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
 * joined by {@link INFO_STACK_SEPARATOR}.
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
 * the handler's own database transaction: committed with its side effect or rolled back with it).
 */
export const INFO_MARKING = { lease: "lease", release: "release", before: "before", inbox: "inbox" } as const;

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
