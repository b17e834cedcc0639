/**
 * Tells a lost dedup memory from keys that expired: compares each completed key count with the
 * one before it. The keys that must still exist are the earlier count minus every key whose TTL
 * could have run out in between (the earlier count's TTL buckets) minus both counts' error bounds;
 * new traffic only adds keys. What is missing below that floor was lost at once — Redis restarted
 * without persistence, was flushed, evicted keys, or failed over to an empty replica — and every
 * duplicate of those messages inside the TTL window will run its handler again.
 *
 * Pure (no I/O): ../watchers/memory-watch.ts feeds it Redis' identity (`INFO server`) and the inspector's counts.
 */
import type { HandlerKeys } from "@/lib/api/handlers";
import { MEMORY_LOSS_HOLD_MS } from "@/names/observe";

/** Fewer keys than this before the loss are too few to tell a loss from noise. */
export const MEMORY_LOSS_MIN_KEYS = 20;

/** What explains a loss: the server restarted, another server answers now, or neither. */
export type MemoryLossCause = "restart" | "failover" | "drop";

/** One handler's detected loss. */
export interface MemoryLoss {
  service: string;
  handler: string;
  /** Keys that had to be there (earlier count minus what could expire, minus error bounds). */
  expected: number;
  /** Keys counted now. */
  now: number;
  /** Keys counted before. */
  before: number;
  /** Lost keys ÷ keys before (0..1). */
  share: number;
  /** When the count that showed it finished (ms). */
  at: number;
  cause: MemoryLossCause;
}

/** One master's identity (`INFO server`). */
export interface RedisIdentity {
  node: string;
  runId: string;
  uptimeSeconds: number;
}

/** `run_id` and `uptime_in_seconds` from an `INFO server` reply. */
export function parseIdentity(node: string, info: string): RedisIdentity | null {
  const runId = /^run_id:(\S+)/m.exec(info)?.[1];
  const uptime = Number(/^uptime_in_seconds:(\d+)/m.exec(info)?.[1]);
  return runId && Number.isFinite(uptime) ? { node, runId, uptimeSeconds: uptime } : null;
}

/** What a loss is computed from, of one handler's count: all a baseline keeps. */
export type CountBaseline = Pick<HandlerKeys, "service" | "handler" | "keyCount" | "errorBound" | "ttlBuckets">;

/**
 * What a {@link MemoryLossDetector} knows, as JSON: the last count (the baseline), the masters'
 * identities, a restart not yet put on a count, and the losses held. Saved in PostgreSQL so that a
 * restarted dashboard (or the next leader) goes on from it: the loss stays held for its full hold
 * and a loss that happened while no dashboard ran is still found.
 */
export interface DetectorSnapshot {
  lastCount: { at: number; handlers: CountBaseline[] } | null;
  identities: Array<RedisIdentity & { seenAt: number }>;
  pendingCause: { cause: MemoryLossCause; at: number } | null;
  held: MemoryLoss[];
}

/** Keys of `h` whose TTL could have run out within `gapMs` (whole buckets whose lower bound is below it). */
function expirable(h: CountBaseline, gapMs: number): number {
  return h.ttlBuckets.reduce((n, b) => n + (b.minMs < gapMs ? b.count : 0), 0);
}

/** The loss of one handler between two counts `gapMs` apart, or null when the keys can be explained. */
export function lossBetween(
  before: CountBaseline,
  now: CountBaseline | undefined,
  gapMs: number,
): Omit<MemoryLoss, "at" | "cause"> | null {
  if (before.keyCount < MEMORY_LOSS_MIN_KEYS) return null;
  const count = now?.keyCount ?? 0;
  const expected = Math.max(0, before.keyCount - expirable(before, gapMs) - before.errorBound - (now?.errorBound ?? 0));
  const lost = expected - count;
  if (lost <= 0) return null;
  return {
    service: before.service,
    handler: before.handler,
    expected,
    now: count,
    before: before.keyCount,
    share: Math.min(1, lost / before.keyCount),
  };
}

const id = (h: { service: string; handler: string }) => `${h.service}\u0000${h.handler}`;

/** Compares successive counts and identities; keeps each loss for {@link MEMORY_LOSS_HOLD_MS}. */
export class MemoryLossDetector {
  private lastCount: { at: number; handlers: CountBaseline[] } | null = null;
  private identities = new Map<string, RedisIdentity & { seenAt: number }>();
  /** A restart or failover seen since the last count, not yet attributed to a count. */
  private pendingCause: { cause: MemoryLossCause; at: number } | null = null;
  private held = new Map<string, MemoryLoss>();

  constructor(private readonly holdMs = MEMORY_LOSS_HOLD_MS) {}

  /**
   * One sample of every master's identity; returns the cause when a master restarted (same node,
   * uptime went back) or another server answers (new `run_id` with an uptime older than the gap).
   */
  observeIdentity(ids: readonly RedisIdentity[], at: number): MemoryLossCause | null {
    let seen: MemoryLossCause | null = null;
    let lastGood = at;
    for (const cur of ids) {
      const prev = this.identities.get(cur.node);
      this.identities.set(cur.node, { ...cur, seenAt: at });
      if (!prev || prev.runId === cur.runId) continue;
      const sinceSeenS = (at - prev.seenAt) / 1000;
      seen = cur.uptimeSeconds <= sinceSeenS + 1 ? "restart" : "failover";
      lastGood = Math.min(lastGood, prev.seenAt);
    }
    if (!seen) return null;
    this.pendingCause = { cause: seen, at };
    // A count that ran before this read already showed the loss as a "drop": the restart explains it.
    for (const l of this.held.values()) if (l.cause === "drop" && l.at > lastGood) l.cause = seen;
    return seen;
  }

  /** A completed count; returns the losses it shows (also held for the gauge). */
  observeCount(handlers: readonly CountBaseline[], at: number): MemoryLoss[] {
    const prev = this.lastCount;
    if (prev && at <= prev.at) return [];
    this.lastCount = {
      at,
      handlers: handlers.map((h) => ({
        service: h.service,
        handler: h.handler,
        keyCount: h.keyCount,
        errorBound: h.errorBound,
        ttlBuckets: h.ttlBuckets,
      })),
    };
    if (!prev) return [];
    const byId = new Map(handlers.map((h) => [id(h), h]));
    const cause = this.pendingCause?.cause ?? "drop";
    this.pendingCause = null;
    const found: MemoryLoss[] = [];
    for (const b of prev.handlers) {
      const l = lossBetween(b, byId.get(id(b)), at - prev.at);
      if (!l) continue;
      const loss = { ...l, at, cause };
      found.push(loss);
      const kept = this.held.get(id(b));
      if (!kept || kept.at + this.holdMs <= at || kept.share <= loss.share) this.held.set(id(b), loss);
    }
    return found;
  }

  /** Losses still held at `now` (the gauge and the pages). */
  losses(now: number): MemoryLoss[] {
    for (const [k, l] of this.held) if (l.at + this.holdMs <= now) this.held.delete(k);
    return [...this.held.values()];
  }

  /** What this detector knows, to be saved ({@link restore} takes it back). */
  snapshot(): DetectorSnapshot {
    return {
      lastCount: this.lastCount,
      identities: [...this.identities.values()],
      pendingCause: this.pendingCause,
      held: [...this.held.values()],
    };
  }

  /** Takes back a {@link snapshot} (of this process or another), replacing what this detector knew. */
  restore(s: DetectorSnapshot): void {
    this.lastCount = s.lastCount;
    this.identities = new Map(s.identities.map((i) => [i.node, i]));
    this.pendingCause = s.pendingCause;
    this.held = new Map(s.held.map((l) => [id(l), l]));
  }

  /** Every handler of the last count (each gets a gauge series, 0 without a loss). */
  counted(): Array<{ service: string; handler: string }> {
    return this.lastCount?.handlers.map((h) => ({ service: h.service, handler: h.handler })) ?? [];
  }
}
