/**
 * The handlers the app declares, as the dashboard reads them. The dashboard only reads: whoever
 * runs a consumer registers its handlers (server/startup.ts registers the demo's when DEMO=on).
 */
import { handlerGroupId } from "@/names/kafka";
import type { HandlerSetup } from "@/server/dedup";
import { dedupKeyPrefix } from "@/names/dedup";

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
  for (const h of handlers) store().set(`${h.service}\u0000${h.setup.handler}`, h);
}

/** Removes every declaration (tests). */
export function clearDeclaredHandlers(): void {
  store().clear();
}

/** The declared handlers, in registration order (none until something registers). */
export function declaredHandlers(): DeclaredHandler[] {
  return [...store().values()];
}

/** The key prefix of a declaration. */
export function declaredPrefix(h: DeclaredHandler): string {
  return h.prefix ?? dedupKeyPrefix(h.service, h.setup.handler);
}

/** The consumer group of a declaration. */
export function declaredGroupId(h: DeclaredHandler): string {
  return h.groupId ?? handlerGroupId(h.service, h.setup.handler);
}
