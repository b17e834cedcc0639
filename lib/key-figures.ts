/**
 * One key count per moment on every panel of a page: the overview's key tile, the capacity table,
 * the fleet table, the handler page's key panel, the key browser's tree and its page header all
 * read a handler's keys from the one `/api/handlers` answer in the page's query cache (the last
 * completed count, with its time), never from answers fetched at other moments.
 */
import type { HandlerKeys, HandlersResponse } from "@/lib/api/handlers";
import type { OverviewHandler } from "@/lib/api/overview";
import { scanFraction } from "@/lib/format";

/** A handler's key figures as the key tile shows them (the overview answer's `keys` shape). */
export type KeyFigures = OverviewHandler["keys"];

/** The handler's row of the count, `undefined` when the count has no key of it. */
export function keyRow(d: HandlersResponse, service: string, handler: string): HandlerKeys | undefined {
  return d.handlers.find((h) => h.service === service && h.handler === handler);
}

/** Why there is no count to show, or `null` when there is one (possibly without a key of the handler). */
function noCount(d: HandlersResponse | undefined): string | null {
  if (!d) return "key count still running";
  if (d.store.status === "not-configured" && d.storeKind !== "memory")
    return "redis: not configured (embedded mode keeps keys in process memory)";
  // A completed count stays on screen while Redis is down (the overview says since when it is stale).
  if (d.handlers.length === 0 && d.scan.finishedAt === null)
    return d.store.status === "down" ? `redis: ${d.store.detail}` : "redis: first key count still running";
  return null;
}

/** The key figures of one handler from the page's `/api/handlers` answer (`undefined` while it loads). */
export function keyFigures(d: HandlersResponse | undefined, service: string, handler: string): KeyFigures {
  const why = noCount(d);
  if (why !== null || !d) return { status: "unavailable", detail: why ?? "" };
  const row = keyRow(d, service, handler);
  return {
    status: "ok",
    count: row?.keyCount ?? 0,
    exact: row?.exact ?? d.scan.mode === "exact",
    errorBound: row?.errorBound ?? 0,
    noTtlCount: row?.noTtlCount ?? 0,
    scanDone: d.scan.done,
    settled: row ? row.keyCount - row.byState.processing : 0,
    processing: row?.byState.processing ?? 0,
    splitExact: row?.byState.exact ?? true,
    leaseShare: row?.leaseShare ?? null,
    countedAt: row?.countedAt ?? d.handlers[0]?.countedAt ?? d.scan.finishedAt,
    recount: scanFraction(d.scan),
  };
}

/** A count is behind its traffic once the messages processed since it reach this share of it. */
const BEHIND_SHARE = 0.1;
/** Younger counts are never called behind: the server starts at most one count per 10 s anyway. */
const BEHIND_MIN_AGE_MS = 10_000;

/**
 * About how many messages the handler processed since its last count (`processedPerSecond` × the
 * count's age), when that is at least a tenth of the count: the count is behind its traffic — a
 * count at start-up, before most messages (3 keys counted, then hundreds written while the count
 * stood for the inspector's minute). At a steady state (keys ≈ rate × TTL) a minute of traffic is a
 * small share of the count and this is `null`. The page then asks for a recount (the server allows
 * one per 10 s) instead of showing the old count as the current one.
 */
export function countBehindTraffic(
  k: KeyFigures,
  processedPerSecond: number | null | undefined,
  now: number = Date.now(),
): number | null {
  if (k.status !== "ok" || k.recount !== null || !processedPerSecond || processedPerSecond <= 0) return null;
  const at = k.countedAt ? Date.parse(k.countedAt) : NaN;
  if (!Number.isFinite(at) || now - at < BEHIND_MIN_AGE_MS) return null;
  const since = processedPerSecond * ((now - at) / 1000);
  return since >= 1 && since >= BEHIND_SHARE * k.count ? Math.round(since) : null;
}
