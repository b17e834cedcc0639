/**
 * The handlers of the fleet, as the dashboard reads them: what each consumer declares in
 * `dedup_handler_info` (docs/CONTRACT.md), read from Prometheus by ../shared/fleet-info.ts, and — the
 * fallback in embedded mode or when Prometheus lacks a handler's info — what a consumer running in
 * this process registered (server/startup.ts registers the demo's when DEMO=on). The dashboard
 * only reads.
 */
import { handlerGroupId } from "@/names/kafka";
import type { HandlerSetup, RepositoryKind } from "@/server/dedup";
import { dedupKeyPrefix, type TtlClass } from "@/names/keys";
import { type InfoMarking, type InfoMode, type InfoSideEffect } from "@/names/contract";

/** A handler's `dedup_handler_info` as read, each absent label `null` (nothing is guessed here). */
export interface InfoDeclaration {
  topic: string | null;
  group: string | null;
  prefix: string | null;
  ttlMs: number | null;
  ttlClass: TtlClass | null;
  leaseMs: number | null;
  timeoutMs: number | null;
  marking: InfoMarking | null;
  failureMode: "open" | "closed" | null;
  stack: string[] | null;
  runtime: string | null;
  contract: string | null;
  repository: RepositoryKind | null;
  /** Whether the lease is renewed while the handler runs. */
  heartbeat: boolean | null;
  /** Its kinds of side effect (`[]`: declares none). */
  sideEffects: InfoSideEffect[] | null;
  mode: InfoMode | null;
}

/** A handler the app runs, as its consumer declares it (the seam between a consumer and the dashboard). */
export interface DeclaredHandler {
  service: string;
  /** Topic it consumes, when known. */
  topic?: string;
  /** Key prefix, default `<service>:dedup:<setup.handler>` (spec §2). */
  prefix?: string;
  /** Its consumer group, default `<service>.<setup.handler>` (the demo's convention). */
  groupId?: string;
  /** The setup `lintHandler` checks: stack order, key factory, TTL and class, repository, marking… */
  setup: HandlerSetup;
  /**
   * `info`: read from the handler's `dedup_handler_info` (then `setup` is built from it and `info`
   * says which of its fields were declared); absent: registered in this process.
   */
  source?: "info";
  info?: InfoDeclaration;
}

const keyOf = (service: string, handler: string) => `${service}\u0000${handler}`;

type FleetGlobal = typeof globalThis & { __dedupHealthFleetInfo?: Map<string, DeclaredHandler> };

/**
 * Replaces what the fleet's `dedup_handler_info` declares (../shared/fleet-info.ts after each read of
 * Prometheus); these come before this process's registrations of the same handler.
 */
export function setFleetInfo(handlers: readonly DeclaredHandler[]): void {
  (globalThis as FleetGlobal).__dedupHealthFleetInfo = new Map(
    handlers.map((h) => [keyOf(h.service, h.setup.handler), { ...h, source: "info" as const }]),
  );
}

function fleetInfo(): Map<string, DeclaredHandler> {
  return (globalThis as FleetGlobal).__dedupHealthFleetInfo ?? new Map();
}

function store(): Map<string, DeclaredHandler> {
  const g = globalThis as typeof globalThis & { __dedupHealthDeclaredHandlers?: Map<string, DeclaredHandler> };
  g.__dedupHealthDeclaredHandlers ??= new Map();
  return g.__dedupHealthDeclaredHandlers;
}

/**
 * Registers (or replaces, by service and handler) handler declarations, so the dashboard lints
 * them, knows their TTL class and window for the capacity projection, and looks UUIDs up under
 * their prefixes. Start-up calls this with the demo's handlers when the demo runs
 * (`registerDemoHandlers`, server/startup.ts). Kept on `globalThis`
 * (Next.js evaluates modules more than once).
 */
export function registerHandlers(handlers: readonly DeclaredHandler[]): void {
  for (const h of handlers) store().set(keyOf(h.service, h.setup.handler), h);
}

/** Removes every declaration, registered or read from the fleet's info (tests). */
export function clearDeclaredHandlers(): void {
  store().clear();
  setFleetInfo([]);
}

/**
 * The declared handlers: each one's last read `dedup_handler_info` first, then those registered in
 * this process that Prometheus has no info of (in registration order).
 */
export function declaredHandlers(): DeclaredHandler[] {
  const info = fleetInfo();
  return [
    ...[...info.entries()].map(([k, h]) => withRegistered(h, store().get(k))),
    ...[...store().entries()].filter(([k]) => !info.has(k)).map(([, h]) => h),
  ];
}

/** The declaration of one handler ({@link declaredHandlers}' first), or undefined. */
export function declaredHandler(service: string, handler: string): DeclaredHandler | undefined {
  const k = keyOf(service, handler);
  const info = fleetInfo().get(k);
  return info ? withRegistered(info, store().get(k)) : store().get(k);
}

/**
 * An info declaration completed by this process's registration of the same handler, for what the
 * info cannot say (key factory, store, replicas) or leaves out (the TTL class), so their lint rules
 * still run on it.
 */
function withRegistered(info: DeclaredHandler, registered: DeclaredHandler | undefined): DeclaredHandler {
  if (!registered) return info;
  const r = registered.setup;
  const i = info.info;
  // A class or side effects the registration declares are declared, though the info leaves them out.
  const ttlClass = i?.ttlClass ?? r.ttlClass;
  const sideEffects = i?.sideEffects ?? (r.sideEffects ? [...r.sideEffects] : null);
  // What the info declares of its store and mode wins over this process's registration.
  const store = i?.mode != null || i?.repository != null;
  return {
    ...info,
    ...(i ? { info: { ...i, ttlClass, sideEffects } } : {}),
    setup: {
      ...info.setup,
      keyFactory: r.keyFactory,
      replicas: r.replicas,
      ttlClass,
      ...(sideEffects ? { sideEffects } : {}),
      ...(store ? {} : { repository: r.repository, mode: r.mode }),
      ...(i?.heartbeat == null && r.heartbeat !== undefined ? { heartbeat: r.heartbeat } : {}),
    },
  };
}

/** The key prefix of a declaration. */
export function declaredPrefix(h: DeclaredHandler): string {
  return h.prefix ?? dedupKeyPrefix(h.service, h.setup.handler);
}

/** The consumer group of a declaration. */
export function declaredGroupId(h: DeclaredHandler): string {
  return h.groupId ?? handlerGroupId(h.service, h.setup.handler);
}
