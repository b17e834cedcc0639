import type { HandlersResponse } from "@/lib/api/handlers";
import type { ObserveContext } from "../core/ports";
import { settleRedis, storeUpstream } from "../shared/upstream";

/** Builds `GET /api/handlers` from the inspector's current state; `refresh` starts a new count (rate-limited). */
export async function getHandlers(
  ctx: ObserveContext,
  q: { refresh: boolean; mode: "auto" | "exact" | "estimate" },
): Promise<HandlersResponse> {
  await settleRedis(ctx);
  const base = {
    generatedAt: new Date().toISOString(),
    prefixes: [...ctx.prefixes],
    storeKind: ctx.inspector?.kind ?? ("none" as const),
  };
  if (!ctx.inspector) {
    return {
      ...base,
      store: storeUpstream(ctx),
      scan: { scanned: 0, total: 0, done: true, mode: "exact", startedAt: null, finishedAt: null },
      refresh: { requested: q.refresh, started: false, retryAfterMs: 0 },
      handlers: [],
      noTtlTotal: 0,
    };
  }
  let refresh = { requested: q.refresh, started: false, retryAfterMs: 0 };
  if (q.refresh || q.mode !== "auto") refresh = { requested: true, ...ctx.inspector.refresh(q.mode) };
  else ctx.inspector.ensureFresh();
  const s = ctx.inspector.current();
  const handlers = s.result?.handlers ?? [];
  return {
    ...base,
    store: storeUpstream(ctx),
    scan: s.progress,
    refresh,
    handlers: handlers.map((h) => ({ ...h, scan: s.progress.done ? h.scan : s.progress })),
    noTtlTotal: handlers.reduce((a, h) => a + h.noTtlCount, 0),
  };
}
