import type { HandlersResponse } from "@/lib/api/handlers";
import type { ObserveContext } from "../core/ports";
import { declaredInboxOwners } from "../keys/postgres-inbox-inspector";
import { settleRedis, storeUpstream } from "../shared/upstream";

/** Builds `GET /api/handlers` from the inspector's current state; `refresh` starts a new count (rate-limited). */
export async function getHandlers(
  ctx: ObserveContext,
  q: { refresh: boolean; mode: "auto" | "exact" | "estimate" },
): Promise<HandlersResponse> {
  await settleRedis(ctx);
  const inbox = inboxPart(ctx, q.refresh);
  const base = {
    generatedAt: new Date().toISOString(),
    prefixes: [...ctx.prefixes],
    storeKind: ctx.inspector?.kind ?? ("none" as const),
    ...(inbox ? { inbox: inbox.part } : {}),
  };
  const inboxHandlers = inbox?.handlers ?? [];
  if (!ctx.inspector) {
    return {
      ...base,
      store: storeUpstream(ctx),
      scan: { scanned: 0, total: 0, done: true, mode: "exact", startedAt: null, finishedAt: null },
      refresh: { requested: q.refresh, started: false, retryAfterMs: 0 },
      handlers: inboxHandlers,
      noTtlTotal: 0,
    };
  }
  let refresh = { requested: q.refresh, started: false, retryAfterMs: 0 };
  if (q.refresh || q.mode !== "auto") refresh = { requested: true, ...ctx.inspector.refresh(q.mode) };
  else ctx.inspector.ensureFresh();
  const s = ctx.inspector.current();
  const handlers = s.result?.handlers ?? [];
  // A prefix whose keys are the inbox's rows is shown from the inbox, not from the key store.
  const inInbox = new Set(inboxHandlers.map((h) => h.prefix));
  return {
    ...base,
    store: storeUpstream(ctx),
    scan: s.progress,
    refresh,
    handlers: [
      ...handlers
        .filter((h) => !inInbox.has(h.prefix))
        .map((h) => ({ ...h, store: ctx.inspector!.kind, scan: s.progress.done ? h.scan : s.progress })),
      ...inboxHandlers,
    ],
    noTtlTotal: handlers.reduce((a, h) => a + h.noTtlCount, 0),
  };
}

/**
 * The inbox table's part of the answer: its counted handlers while its last count stands, else
 * every handler it should hold as not measured, with the reason (the database down, the table
 * missing, the first count running) — never a count of 0.
 */
function inboxPart(ctx: ObserveContext, refresh: boolean) {
  const src = ctx.inbox;
  if (!src) return null;
  if (refresh) src.refresh();
  else src.ensureFresh();
  const s = src.current();
  const failed = s.error !== null && !src.busy;
  if (s.result && !failed) {
    const counted = new Set(s.result.handlers.map((h) => h.prefix));
    const waiting = declaredInboxOwners().filter((o) => !counted.has(o.prefix));
    return {
      handlers: s.result.handlers,
      part: {
        store: { status: "up" as const, detail: `postgres-inbox ${src.table}` },
        table: src.table,
        notMeasured: waiting.map((o) => ({ ...o, reason: "declared after the last count: counted at the next one" })),
      },
    };
  }
  const reason = failed ? `postgres-inbox: ${s.error}` : "postgres-inbox: first count still running";
  const owners = new Map(declaredInboxOwners().map((o) => [o.prefix, o]));
  for (const h of s.result?.handlers ?? []) owners.set(h.prefix, h);
  return {
    handlers: [],
    part: {
      store: { status: failed ? ("down" as const) : ("up" as const), detail: reason },
      table: src.table,
      notMeasured: [...owners.values()].map((o) => ({
        service: o.service,
        handler: o.handler,
        prefix: o.prefix,
        reason,
      })),
    },
  };
}
