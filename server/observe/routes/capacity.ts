import type { CapacityHandler, CapacityResponse } from "@/lib/api/capacity";
import type { HandlerKeys } from "@/lib/api/handlers";
import { TTL_POLICY } from "@/names/keys";
import type { ObserveContext } from "../core/ports";
import { handlerPrefix, splitPrefix } from "../keys/glob";
import { isTransactional, refreshFleetInfo } from "../shared/fleet-info";
import { declaredHandlers, declaredPrefix, type DeclaredHandler } from "../core/handler-registry";
import { got, inspectedHandlers, unavailable, type Got } from "../shared/upstream";
import type { Sample } from "../metrics/source";

/** A gap beyond these ratios of measured / projected keys gets a note. */
const GAP_HIGH = 1.5;
const GAP_LOW = 0.5;
/**
 * Share of the window from which it counts as full. The oldest key is read from a uniform sample
 * (≤ 500 keys), whose smallest remaining TTL in a full window is about window/500 — 0.2 %.
 */
export const WINDOW_FULL = 0.95;

/** Where keys' age comes from: the oldest settled key in Redis, or (no Redis: in-process store) the process start. */
export interface WindowInput {
  ttlMs: number;
  /** Smallest remaining TTL of a sampled settled (not lease) key, ms; `null` when none was sampled. */
  settledMinTtlMs: number | null;
  /** Largest remaining TTL seen; a key that outlives the window means the declared TTL is not the one written. */
  maxTtlMs: number | null;
  /** Process uptime (ms) when keys live in this process' memory, else `null`. */
  processAgeMs: number | null;
  now: number;
}

/**
 * How much of the TTL window keys have been written for. The oldest settled key's age is the window
 * minus its remaining TTL (a key written at start-up still has window − uptime left); a fresh
 * service has only young keys, and rate × TTL then over-projects by window ÷ age. `null` when
 * neither source knows, or when keys outlive the window (then the declared TTL is wrong and the
 * gap note must speak).
 */
export function windowFill(w: WindowInput): CapacityHandler["window"] {
  if (!(w.ttlMs > 0)) return null;
  let ageMs: number;
  let source: "oldest-key" | "process-start";
  if (w.settledMinTtlMs !== null) {
    if (w.maxTtlMs !== null && w.maxTtlMs > w.ttlMs * 1.05) return null;
    ageMs = Math.min(w.ttlMs, Math.max(0, w.ttlMs - w.settledMinTtlMs));
    source = "oldest-key";
  } else if (w.processAgeMs !== null) {
    ageMs = Math.min(w.ttlMs, Math.max(0, w.processAgeMs));
    source = "process-start";
  } else return null;
  const filled = ageMs / w.ttlMs;
  return {
    ageMs,
    filled,
    validAt: filled >= WINDOW_FULL ? null : new Date(w.now + (w.ttlMs - ageMs)).toISOString(),
    source,
  };
}

/** Per context: when each prefix's traffic was first seen (ms). */
const FIRST_TRAFFIC = new WeakMap<ObserveContext, Map<string, number>>();

/** Records the prefix's first traffic now (if not yet) and says whether the last completed count started after it (strictly: a count started in the same millisecond may not have seen it). */
function countSawTraffic(ctx: ObserveContext, prefix: string): boolean {
  let m = FIRST_TRAFFIC.get(ctx);
  if (!m) FIRST_TRAFFIC.set(ctx, (m = new Map()));
  const first = m.get(prefix) ?? Date.now();
  m.set(prefix, first);
  const startedAt = ctx.inspector?.current().result?.startedAt;
  return startedAt !== undefined && startedAt > first;
}

/** What a handler's row tells its reader beside the figures: keys that never expire, a gap, traffic without keys, where the TTL came from. */
function capacityNotes(
  measured: HandlerKeys | undefined,
  o: {
    warming: boolean;
    gapRatio: number | null;
    ttlSource: CapacityHandler["ttlSource"];
    trafficWithoutKeys: boolean;
  },
): string[] {
  const notes: string[] = [];
  if (measured && measured.noTtlCount > 0)
    notes.push(
      `${measured.noTtlExact ? "" : "About "}${measured.noTtlCount} keys without TTL never expire: they only grow (a bug in the writer).`,
    );
  if (!o.warming && o.gapRatio !== null && o.gapRatio > GAP_HIGH)
    notes.push(
      "More keys than projected: stale keys, keys without TTL, a TTL longer than declared, or traffic that dropped recently.",
    );
  if (!o.warming && o.gapRatio !== null && o.gapRatio < GAP_LOW)
    notes.push(
      "Fewer keys than projected: a TTL shorter than declared, keys written under another prefix, or traffic that rose recently.",
    );
  if (o.trafficWithoutKeys)
    notes.push("Traffic but no keys under this prefix: wrong prefix, or an in-memory repository.");
  if (o.ttlSource === "observed")
    notes.push("TTL taken from the largest remaining TTL seen in Redis (a lower bound of the configured window).");
  return notes;
}

/**
 * Builds `GET /api/capacity`: per handler, live keys ≈ rate of new (non-deduplicated) messages ×
 * TTL and memory ≈ keys × bytes/key, next to what Redis holds. The projection assumes the 5-min
 * rate held for a whole window, so right after a traffic change the two differ by design; a
 * steady gap points at missing TTLs, a wrong prefix or stale keys. **Warm-up**: until keys are
 * as old as the window ({@link windowFill}) only the filled share is projected and no gap note is
 * given ("window 4 % filled — projection valid after …").
 */
export function getCapacity(ctx: ObserveContext): Promise<CapacityResponse> {
  return ctx.answers.get("capacity", () => buildCapacity(ctx));
}

/** One handler prefix's row of `GET /api/capacity`: its window, traffic, projection and what the last count measured. */
function capacityRow(
  ctx: ObserveContext,
  prefix: string,
  d: DeclaredHandler | undefined,
  keys: ReturnType<typeof inspectedHandlers>,
  rate: Got<Sample[]>,
): CapacityHandler {
  const owner = d ? { service: d.service, handler: d.setup.handler } : splitPrefix(prefix);
  const measured = keys.ok ? keys.value.find((h) => h.prefix === prefix) : undefined;
  // An info without ttl_ms declares no window: the keys' TTLs say it instead.
  const ttl =
    d && (d.source !== "info" || d.info?.ttlMs != null)
      ? { ms: d.setup.ttlMs, source: "declared" as const }
      : measured?.ttlObserved
        ? { ms: measured.ttlObserved.maxMs, source: "observed" as const }
        : { ms: TTL_POLICY.defaultMs, source: "default" as const };
  const newRate = rate.ok
    ? rate.value
        .filter((s) => s.labels.service === owner.service && s.labels.handler === owner.handler)
        .reduce<number | null>((a, s) => (a ?? 0) + (s.value ?? 0), null)
    : null;
  const window = windowFill({
    ttlMs: ttl.ms,
    settledMinTtlMs: measured?.settledMinTtlMs ?? null,
    maxTtlMs: measured?.ttlObserved?.maxMs ?? null,
    // Without Redis the demo's keys live in this process' memory: they are as old as it is.
    processAgeMs: ctx.inspector ? null : process.uptime() * 1000,
    now: Date.now(),
  });
  const warming = window !== null && window.filled < WINDOW_FULL;
  const projectedKeys = newRate === null ? null : Math.round(newRate * ((warming ? window.ageMs : ttl.ms) / 1000));
  const bytesPerKey = measured?.bytesPerKey ?? null;
  const projectedBytes = projectedKeys !== null && bytesPerKey !== null ? projectedKeys * bytesPerKey : null;
  const gapRatio = measured && projectedKeys ? measured.keyCount / projectedKeys : null;
  // Only a count that started after this handler's traffic was first seen can miss its keys: the
  // start-up count, taken before any traffic, says nothing about the prefix.
  const notes = capacityNotes(measured, {
    warming,
    gapRatio,
    ttlSource: ttl.source,
    trafficWithoutKeys: keys.ok && !measured && (newRate ?? 0) > 0 && countSawTraffic(ctx, prefix),
  });
  return {
    service: owner.service,
    handler: owner.handler,
    prefix,
    ttlMs: ttl.ms,
    ttlSource: ttl.source,
    window,
    newRate: rate.ok ? { status: "ok", value: newRate } : unavailable(rate.detail),
    projectedKeys,
    projectedBytes,
    measured: !keys.ok
      ? unavailable(keys.detail)
      : {
          status: "ok",
          keys: measured?.keyCount ?? 0,
          exact: measured?.exact ?? true,
          errorBound: measured?.errorBound ?? 0,
          bytesPerKey,
          bytes: measured && bytesPerKey !== null ? measured.keyCount * bytesPerKey : null,
          noTtlCount: measured?.noTtlCount ?? 0,
          processing: measured?.byState.processing ?? 0,
          leaseShare: measured ? measured.leaseShare : 0,
          countedAt: measured?.countedAt ?? null,
        },
    gapRatio,
    notes,
  };
}

async function buildCapacity(ctx: ObserveContext): Promise<CapacityResponse> {
  const rate = await got(ctx.metrics.instant("new_rate"));
  // Every handler's declared window, from its dedup_handler_info wherever it runs (else this process's registration).
  await refreshFleetInfo(ctx);
  const keys = inspectedHandlers(ctx);
  // A Kafka-transactions handler writes no key: there is no window to project.
  const declared = new Map(
    declaredHandlers()
      .filter((d) => !isTransactional(d))
      .map((d) => [declaredPrefix(d), d]),
  );
  const prefixes = new Set<string>(declared.keys());
  if (keys.ok) for (const h of keys.value) prefixes.add(h.prefix);
  if (rate.ok)
    for (const s of rate.value)
      if (s.labels.service && s.labels.handler) prefixes.add(handlerPrefix(s.labels.service, s.labels.handler));

  const handlers = [...prefixes].sort().map((prefix) => capacityRow(ctx, prefix, declared.get(prefix), keys, rate));
  const sum = (xs: Array<number | null>) =>
    xs.some((x) => x !== null) ? xs.reduce<number>((a, x) => a + (x ?? 0), 0) : null;
  return {
    generatedAt: new Date().toISOString(),
    source: ctx.metrics.kind,
    handlers,
    totals: {
      projectedKeys: sum(handlers.map((h) => h.projectedKeys)),
      measuredKeys: keys.ok ? sum(handlers.map((h) => (h.measured.status === "ok" ? h.measured.keys : null))) : null,
      measuredBytes: keys.ok ? sum(handlers.map((h) => (h.measured.status === "ok" ? h.measured.bytes : null))) : null,
    },
  };
}
