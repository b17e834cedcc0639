/**
 * What every handler of the fleet declares about itself, read from Prometheus: the
 * `dedup_handler_info` series (docs/CONTRACT.md §5) of every consumer it scrapes — this process's,
 * another Node service's, a Java or Go one's. Each read replaces the fleet's declarations in
 * ../core/handler-registry.ts, where this process's own registrations remain the fallback (embedded mode,
 * or a handler Prometheus has no info of). Nothing absent is guessed here: an absent label stays
 * `null` in `info`, and what is inferred from it elsewhere says so.
 */
import {
  HANDLER_INFO_LABEL as L,
  INFO_HEARTBEAT,
  INFO_MARKING,
  INFO_MARKINGS,
  INFO_MODE,
  INFO_MODES,
  INFO_NO_SIDE_EFFECTS,
  INFO_SIDE_EFFECTS,
  INFO_STACK_SEPARATOR,
  type InfoMarking,
  type InfoMode,
  type InfoSideEffect,
} from "@/names/contract";
import { TTL_CLASSES, TTL_POLICY, type TtlClass } from "@/names/keys";
import type { HandlerSetup, RepositoryKind } from "@/server/dedup";
import type { ObserveContext } from "../core/ports";
import {
  declaredHandlers,
  declaredPrefix,
  setFleetInfo,
  type DeclaredHandler,
  type InfoDeclaration,
} from "../core/handler-registry";
import { splitPrefix } from "../keys/glob";
import type { Sample } from "../metrics/source";
import { got, type Got } from "./upstream";

const num = (v: string | undefined): number | null =>
  v === undefined || v === "" || !Number.isFinite(Number(v)) ? null : Number(v);
const str = (v: string | undefined): string | null => (v === undefined || v === "" ? null : v);
const oneOf = <T extends string>(v: string | undefined, all: readonly T[]): T | null =>
  (all as readonly string[]).includes(v ?? "") ? (v as T) : null;

const list = (v: string | undefined): string[] | null =>
  v === undefined || v === ""
    ? null
    : v
        .split(INFO_STACK_SEPARATOR)
        .map((s) => s.trim())
        .filter(Boolean);

/** `side_effects` as declared: `none` is `[]`; a kind the contract does not name makes it unreadable (`null`). */
function sideEffectsOf(v: string | undefined): InfoSideEffect[] | null {
  if (v?.trim() === INFO_NO_SIDE_EFFECTS) return [];
  const kinds = list(v);
  return kinds && kinds.every((k) => (INFO_SIDE_EFFECTS as readonly string[]).includes(k))
    ? (kinds as InfoSideEffect[])
    : null;
}

const REPOSITORIES: readonly RepositoryKind[] = ["redis", "memory", "postgres-inbox", "custom"];

/** The declaration one `dedup_handler_info` series carries; absent or unreadable labels are `null`. */
export function infoDeclaration(labels: Readonly<Record<string, string>>): InfoDeclaration {
  return {
    topic: str(labels[L.topic]),
    group: str(labels[L.group]),
    prefix: str(labels[L.prefix]),
    ttlMs: num(labels[L.ttlMs]),
    ttlClass: oneOf<TtlClass>(labels[L.ttlClass], TTL_CLASSES),
    leaseMs: num(labels[L.leaseMs]),
    timeoutMs: num(labels[L.timeoutMs]),
    // The library's own name of the note's marking is accepted too.
    marking: labels[L.marking] === "naive" ? INFO_MARKING.before : oneOf<InfoMarking>(labels[L.marking], INFO_MARKINGS),
    failureMode: oneOf(labels[L.failureMode], ["open", "closed"] as const),
    stack: list(labels[L.stack]),
    runtime: str(labels[L.runtime]),
    contract: str(labels[L.contract]),
    repository: oneOf(labels[L.repository], REPOSITORIES),
    heartbeat:
      labels[L.heartbeat] === INFO_HEARTBEAT.on ? true : labels[L.heartbeat] === INFO_HEARTBEAT.off ? false : null,
    sideEffects: sideEffectsOf(labels[L.sideEffects]),
    mode: oneOf<InfoMode>(labels[L.mode], INFO_MODES),
  };
}

/** The TTL class a window falls in (spec §3): 7 d or more critical, 1 h or less analytics, else default. An inference, never a declaration. */
export function inferredTtlClass(ttlMs: number): TtlClass {
  if (ttlMs >= TTL_POLICY.criticalMs) return "critical";
  if (ttlMs <= TTL_POLICY.analyticsMaxMs) return "analytics";
  return "default";
}

/** The store a declaration names: its `mode` when that is a store, else its `repository`. */
function storeOf(i: InfoDeclaration): RepositoryKind | null {
  if (i.mode === INFO_MODE.kafkaTransactions || i.mode === null) return i.repository;
  return i.mode;
}

/** The mode a declaration names; marking `kafka-transaction` is the transactions mode by definition (CONTRACT.md §5). */
export function modeOfInfo(i: InfoDeclaration): InfoMode | null {
  return i.mode ?? (i.marking === INFO_MARKING.kafkaTransaction ? INFO_MODE.kafkaTransactions : null);
}

/** Whether a handler runs in the Kafka-transactions mode: no key, no window, no lease to show or lint. */
export function isTransactional(d: DeclaredHandler | undefined): boolean {
  return !!d && (d.info ? modeOfInfo(d.info) : (d.setup.mode ?? null)) === INFO_MODE.kafkaTransactions;
}

/**
 * The lint input of an info declaration. What the info cannot say — the key factory, the replicas,
 * and what it leaves out — is set to what no rule flags, and the lint keeps only the findings whose
 * inputs were declared (`lintDeclared`, ../routes/lint.ts).
 */
export function setupFromInfo(handler: string, i: InfoDeclaration): HandlerSetup {
  const ttlMs = i.ttlMs ?? TTL_POLICY.defaultMs;
  const mode = modeOfInfo(i);
  return {
    sideEffects: i.sideEffects ?? [],
    // Undeclared: the lint derives it from the store, and keeps only the rules the info allows.
    ...(mode ? { mode } : {}),
    heartbeat: i.heartbeat === true,
    handler,
    // Without a stack the Deduplicator is assumed present, so only the rules that need no order run.
    stack: i.stack ?? ["deduplicator"],
    keyFactory: "uuid",
    ttlMs,
    ttlClass: i.ttlClass ?? inferredTtlClass(ttlMs),
    repository: storeOf(i) ?? "redis",
    replicas: 1,
    marking: i.marking === INFO_MARKING.before ? "naive" : i.marking === INFO_MARKING.release ? "release" : "lease",
    failureMode: i.failureMode ?? "open",
    leaseMs: i.leaseMs ?? 0,
    timeoutMs: i.timeoutMs,
  };
}

/** The fleet's declarations in an answer of the `handler_info` query: one per service and handler (the first series wins). */
export function declarationsFromInfo(samples: readonly Sample[]): DeclaredHandler[] {
  const out = new Map<string, DeclaredHandler>();
  for (const s of samples) {
    const service = s.labels[L.service];
    const handler = s.labels[L.handler];
    if (!service || !handler || out.has(`${service}\u0000${handler}`)) continue;
    const info = infoDeclaration(s.labels);
    out.set(`${service}\u0000${handler}`, {
      service,
      ...(info.topic ? { topic: info.topic } : {}),
      ...(info.prefix ? { prefix: info.prefix } : {}),
      ...(info.group ? { groupId: info.group } : {}),
      setup: setupFromInfo(handler, info),
      source: "info",
      info,
    });
  }
  return [...out.values()];
}

/**
 * Reads every `dedup_handler_info` from the metrics source and makes it the fleet's declarations
 * (shared by concurrent callers for 5 s). A failed read keeps the last known ones and says why.
 */
export function refreshFleetInfo(ctx: ObserveContext): Promise<Got<DeclaredHandler[]>> {
  return ctx.answers.get(
    "fleet:handler_info",
    async () => {
      const r = await got(ctx.metrics.instant("handler_info"));
      if (!r.ok) return r;
      const declared = declarationsFromInfo(r.value);
      setFleetInfo(declared);
      return { ok: true as const, value: declared };
    },
    5_000,
  );
}

/**
 * The topic a handler prefix's keys belong to, for "find by UUID" links: the topic its
 * declaration names (dedup_handler_info or this process's registration), else the `topic` label of
 * its metrics; `null` when neither says.
 */
export async function prefixTopic(ctx: ObserveContext, prefix: string): Promise<string | null> {
  const d = declaredHandlers().find((h) => declaredPrefix(h) === prefix);
  if (d?.topic) return d.topic;
  const owner = d ? { service: d.service, handler: d.setup.handler } : splitPrefix(prefix);
  const r = await got(ctx.metrics.instant("processed_rate"));
  return (
    (r.ok
      ? r.value.find((s) => s.labels.service === owner.service && s.labels.handler === owner.handler && s.labels.topic)
          ?.labels.topic
      : undefined) ?? null
  );
}
