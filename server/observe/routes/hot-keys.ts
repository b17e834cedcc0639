/**
 * `GET /api/hot-keys`: a handler's most swallowed UUIDs. With Prometheus, over the fleet: every
 * process exports its merged top UUIDs (`dedup_hot_uuid_copies`, server/dedup/hot-keys-gauge) and
 * the answer adds them up by UUID, so a storm split over the replicas of several processes is one
 * row with the sum; a service without the gauge is "not measured", never "nothing swallowed".
 * Without Prometheus (embedded mode), over the sketches of this process's Deduplicators.
 */
import { DEFAULT_HOT_KEYS_OPTIONS, hotKeysBoard } from "@/server/dedup";
import type { HotKeysResponse } from "@/lib/api/hot-keys";
import { HOT_UUID_TOP_K } from "@/names/dedup";
import type { ObserveContext } from "../core/ports";
import { handlerPrefix, PrefixGlobs } from "../keys/glob";
import { measured, readSignals } from "../shared/signals";
import { errorText, ForbiddenError } from "../core/errors";

/**
 * Builds `GET /api/hot-keys`: the hot-key table of one handler as the handler page shows it; a 403 for a handler whose keys are
 * outside `ctx.prefixes` (`DEDUP_PREFIXES`, when given): its key names are not ours to show.
 */
export async function getHotKeys(
  ctx: Pick<ObserveContext, "metrics"> & Partial<Pick<ObserveContext, "prefixes">>,
  q: { service: string; handler: string },
): Promise<HotKeysResponse> {
  const prefix = handlerPrefix(q.service, q.handler);
  if (ctx.prefixes && !new PrefixGlobs(ctx.prefixes).matches(`${prefix}:x`))
    throw new ForbiddenError(`keys of ${prefix} are outside DEDUP_PREFIXES (${ctx.prefixes.join(", ")})`);
  return ctx.metrics.kind === "prometheus" ? fleetHotKeys(ctx, q) : processHotKeys(q);
}

/** The fleet's table: the exported gauges of every process, summed by UUID. */
async function fleetHotKeys(
  ctx: Pick<ObserveContext, "metrics">,
  q: { service: string; handler: string },
): Promise<HotKeysResponse> {
  const at = Date.now() / 1000;
  const base = {
    generatedAt: new Date().toISOString(),
    service: q.service,
    handler: q.handler,
    since: null,
    windowMs: DEFAULT_HOT_KEYS_OPTIONS.windowMs,
    capacity: HOT_UUID_TOP_K,
    scope: "fleet" as const,
  };
  let read;
  try {
    read = await Promise.all([
      ctx.metrics.instant("hot_uuids", at),
      ctx.metrics.instant("hot_uuid_error_bound", at),
      readSignals(ctx.metrics, at, [q.service]),
    ]);
  } catch (e) {
    // The page keeps answering while Prometheus is down: the table is unknown, and says why.
    return { ...base, total: 0, sketches: 0, notMeasured: null, unavailable: `prometheus: ${errorText(e)}`, keys: [] };
  }
  const [copies, bounds, signals] = read;
  const mine = (l: Record<string, string>) => l.service === q.service && l.handler === q.handler;
  const m = measured(signals, q.service, "hotUuids");
  const processBounds = bounds.filter((b) => mine(b.labels));
  const keys = copies
    .filter((c) => mine(c.labels) && c.labels.uuid)
    .map((c) => ({
      key: `${handlerPrefix(q.service, q.handler)}:${c.labels.uuid}`,
      uuid: c.labels.uuid!,
      topic: c.labels.topic ?? "",
      count: c.value ?? 0,
      error: 0,
      byCause: {},
      lastPosition: null,
      lastAt: null,
    }))
    .sort((a, b) => b.count - a.count)
    .slice(0, HOT_UUID_TOP_K);
  const errorBound = processBounds.reduce((a, b) => a + (b.value ?? 0), 0);
  return {
    ...base,
    total: keys.reduce((a, k) => a + k.count, 0),
    sketches: processBounds.length,
    notMeasured: m.status === "unknown" ? m : null,
    unavailable: null,
    errorBound,
    keys: keys.map((k) => ({ ...k, error: errorBound })),
  };
}

/** This process's table: the sketches of its Deduplicators on the process's board. */
function processHotKeys(q: { service: string; handler: string }): HotKeysResponse {
  const board = hotKeysBoard();
  const sketches = board.sketches(q.service);
  const t = board.top(q.service, q.handler);
  return {
    generatedAt: new Date().toISOString(),
    service: q.service,
    handler: q.handler,
    since: t ? new Date(t.since).toISOString() : null,
    windowMs: sketches[0]?.options.windowMs ?? DEFAULT_HOT_KEYS_OPTIONS.windowMs,
    total: t?.total ?? 0,
    capacity: t?.capacity ?? DEFAULT_HOT_KEYS_OPTIONS.capacity,
    sketches: sketches.filter((s) => s.handlers().includes(q.handler)).length,
    scope: "process",
    notMeasured: null,
    keys: (t?.keys ?? []).map((k) => ({
      key: k.key,
      uuid: k.uuid,
      topic: k.topic,
      count: k.count,
      error: k.error,
      byCause: k.byCause,
      lastPosition: k.lastPosition,
      lastAt: new Date(k.lastAt).toISOString(),
    })),
  };
}
