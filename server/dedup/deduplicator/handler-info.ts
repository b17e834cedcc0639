/**
 * The self-description gauge `dedup_handler_info{…} = 1` (docs/CONTRACT.md): what a handler
 * declares — topic, consumer group, key prefix, window and class, lease, attempt time limit,
 * marking, failure mode, stack — so a dashboard that does not run the consumer (another process,
 * another language) lints it, projects its capacity and joins its lag by the declared group.
 * `defaultStack` exports it for every handler it is registered with.
 */
import { Gauge, type Registry } from "prom-client";
import {
  CONTRACT_VERSION,
  HANDLER_INFO_LABEL as L,
  HANDLER_INFO_LABELS,
  HANDLER_INFO_METRIC,
  INFO_HEARTBEAT,
  INFO_MARKING,
  INFO_NO_SIDE_EFFECTS,
  INFO_STACK_SEPARATOR,
  storeMode,
  type HandlerInfoLabel,
  type InfoMarking,
  type InfoMode,
  type InfoSideEffect,
} from "../../../names/contract";
import { dedupKeyPrefix, type TtlClass } from "../../../names/keys";
import { handlerGroupId } from "../../../names/kafka";
import { DEFAULT_DEDUPLICATOR_OPTIONS, type DeduplicatorOptions, type Marking } from "./deduplicator-options";
import type { Middleware } from "../message";
import type { FailureMode, RepositoryKind } from "../repository/repository";

/** What one handler declares about itself (the labels of {@link HANDLER_INFO_METRIC}). */
export interface HandlerInfo {
  service: string;
  handler: string;
  topic: string;
  /** Its consumer group. */
  group: string;
  /** Key prefix: keys are `<prefix>:<uuid>`; `null`: no key is written (marking `kafka-transaction`). */
  prefix: string | null;
  /** The window; `null`: nothing expires (marking `kafka-transaction`: does not apply). */
  ttlMs: number | null;
  /** `null`: not declared (the label is left out; a dashboard infers it and says so). */
  ttlClass: TtlClass | null;
  /** `null`: no lease (markings other than `lease`). */
  leaseMs: number | null;
  /** Time limit of one handler attempt; `null`: none. */
  timeoutMs: number | null;
  marking: InfoMarking;
  failureMode: FailureMode;
  /** Middleware names, outermost first. */
  stack: readonly string[];
  /** @default "node" */
  runtime?: string;
  /** The store of the dedup keys (`redis`, `memory`, `postgres-inbox`, `custom`); absent: not declared, or no store (marking `kafka-transaction`). */
  repository?: RepositoryKind;
  /** Whether the lease is renewed while the handler runs; absent: not declared. */
  heartbeat?: boolean;
  /** The kinds of side effect the handler has (empty: none); absent: not declared (the effect rules say "not known"). */
  sideEffects?: readonly InfoSideEffect[];
  /** What makes its effects once; absent: not declared. */
  mode?: InfoMode;
}

/** The `mode` of a Deduplicator on a store of `kind` (names/contract.ts `storeMode`); `undefined` without a store. */
export function dedupMode(kind: RepositoryKind | undefined): InfoMode | undefined {
  return kind === undefined ? undefined : storeMode(kind);
}

/** The contract's name of a library marking: the note's never-released `naive` is `before`. */
export function infoMarking(m: Marking): InfoMarking {
  return m === "naive" ? INFO_MARKING.before : m === "release" ? INFO_MARKING.release : INFO_MARKING.lease;
}

/** The label values of `info` (labels without a value are left out: Prometheus treats "" as absent). */
export function handlerInfoLabels(info: HandlerInfo): Partial<Record<HandlerInfoLabel, string>> {
  const out: Partial<Record<HandlerInfoLabel, string>> = {
    [L.service]: info.service,
    [L.handler]: info.handler,
    [L.topic]: info.topic,
    [L.group]: info.group,
    [L.marking]: info.marking,
    [L.failureMode]: info.failureMode,
    [L.stack]: info.stack.join(INFO_STACK_SEPARATOR),
    [L.runtime]: info.runtime ?? "node",
    [L.contract]: CONTRACT_VERSION,
  };
  if (info.prefix !== null) out[L.prefix] = info.prefix;
  if (info.ttlMs !== null) out[L.ttlMs] = String(info.ttlMs);
  if (info.ttlClass !== null) out[L.ttlClass] = info.ttlClass;
  if (info.leaseMs !== null) out[L.leaseMs] = String(info.leaseMs);
  if (info.timeoutMs !== null) out[L.timeoutMs] = String(info.timeoutMs);
  if (info.repository !== undefined) out[L.repository] = info.repository;
  if (info.heartbeat !== undefined) out[L.heartbeat] = info.heartbeat ? INFO_HEARTBEAT.on : INFO_HEARTBEAT.off;
  if (info.sideEffects !== undefined)
    out[L.sideEffects] = info.sideEffects.length ? info.sideEffects.join(INFO_STACK_SEPARATOR) : INFO_NO_SIDE_EFFECTS;
  if (info.mode !== undefined) out[L.mode] = info.mode;
  return out;
}

/** Per registry: the labels exported for each `service\0handler`, so a re-registration replaces its series. */
const exported = new WeakMap<Registry, Map<string, Partial<Record<HandlerInfoLabel, string>>>>();

/**
 * Sets `dedup_handler_info{…} = 1` for `info` on `registry` (get-or-create: a second bundle of
 * this module shares the gauge). **One series per service and handler**: registering the same
 * handler again with other values removes the previous series.
 */
export function exportHandlerInfo(registry: Registry, info: HandlerInfo): void {
  const gauge =
    (registry.getSingleMetric(HANDLER_INFO_METRIC) as Gauge<HandlerInfoLabel> | undefined) ??
    new Gauge<HandlerInfoLabel>({
      name: HANDLER_INFO_METRIC,
      help: "What a dedup handler declares about itself (docs/CONTRACT.md); always 1",
      labelNames: [...HANDLER_INFO_LABELS],
      registers: [registry],
    });
  let byHandler = exported.get(registry);
  if (!byHandler) exported.set(registry, (byHandler = new Map()));
  const key = `${info.service}\u0000${info.handler}`;
  const labels = handlerInfoLabels(info);
  const before = byHandler.get(key);
  if (before) gauge.remove(before);
  byHandler.set(key, labels);
  gauge.set(labels, 1);
}

/** The handler-independent part of a {@link HandlerInfo}, as `defaultStack` knows it. */
export type StackInfo = Omit<HandlerInfo, "handler" | "topic" | "group" | "prefix"> & {
  /** Fixed key prefix; `null`: `<service>:dedup:<handler>`. */
  prefix: string | null;
  /** Consumer group; `null`: `<service>.<handler>` (this library's convention). */
  group: string | null;
};

/** The whole {@link HandlerInfo} of handler `name` on `topic` under `base`. */
export function handlerInfoOf(base: StackInfo, name: string, topic: string): HandlerInfo {
  return {
    ...base,
    handler: name,
    topic,
    prefix: base.prefix ?? dedupKeyPrefix(base.service, name),
    group: base.group ?? handlerGroupId(base.service, name),
  };
}

/** What `defaultStack` adds to its Deduplicator's options for the self-description. */
export interface StackDeclaration {
  /** The attempt's time limit (`defaultStack`'s `timeoutMs`); `null`: none. */
  timeoutMs: number | null;
  ttlClass: TtlClass | null;
  group: string | null;
  /** The built stack's middleware names, outermost first. */
  stack: readonly string[];
  /** The handlers' kinds of side effect (`defaultStack`'s `sideEffects`); `null`: not declared. */
  sideEffects?: readonly InfoSideEffect[] | null;
}

/** The {@link StackInfo} of a stack built over Deduplicator options `o` (their defaults applied as the Deduplicator applies them). */
export function stackInfoOf(o: DeduplicatorOptions, d: StackDeclaration): StackInfo {
  const marking = o.marking ?? DEFAULT_DEDUPLICATOR_OPTIONS.marking;
  return {
    service: o.service ?? DEFAULT_DEDUPLICATOR_OPTIONS.service,
    prefix: o.prefix ?? null,
    group: d.group,
    ttlMs: o.ttlMs ?? DEFAULT_DEDUPLICATOR_OPTIONS.ttlMs,
    ttlClass: d.ttlClass,
    leaseMs: marking === "lease" ? (o.leaseMs ?? DEFAULT_DEDUPLICATOR_OPTIONS.leaseMs) : null,
    timeoutMs: d.timeoutMs,
    marking: infoMarking(marking),
    failureMode: o.failureMode ?? o.repository?.failureMode ?? "open",
    stack: d.stack,
    repository: o.repository?.kind,
    heartbeat: marking === "lease" && (o.heartbeat ?? DEFAULT_DEDUPLICATOR_OPTIONS.heartbeat),
    ...(d.sideEffects ? { sideEffects: d.sideEffects } : {}),
    mode: dedupMode(o.repository?.kind),
  };
}

/**
 * Makes the stack's Deduplicator export `dedup_handler_info` on `registry` for every handler it is
 * registered with (its `onRegister` hook, called by `Router.addHandler` / `Router.use`), beside the
 * handler's zero series. Nothing without a Deduplicator in `stack`.
 */
export function selfDescribe(stack: readonly Middleware[], registry: Registry, base: StackInfo): void {
  const dedup = stack.find((m) => m.middlewareName === "deduplicator");
  if (!dedup) return;
  const own = dedup.onRegister;
  dedup.onRegister = (h) => {
    own?.(h);
    exportHandlerInfo(registry, handlerInfoOf(base, h.name, h.topic));
  };
}
