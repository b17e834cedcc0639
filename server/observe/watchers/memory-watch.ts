/**
 * Watches the dedup memory in Redis: at every scrape of `/api/metrics` (and every overview) it
 * reads each master's `INFO server` (bounded: at most every {@link WATCH_MIN_INTERVAL_MS}), keeps
 * the key count fresh (the inspector's own bound), and feeds both to a {@link MemoryLossDetector}.
 * Exports `dedup_memory_lost_ratio{service,handler}` (the `DedupMemoryLost` alert) and tells the
 * pages since when Redis cannot be read ("stale since …").
 *
 * With `DATABASE_URL` the detector's state (baseline count, identities, held losses) is saved in
 * PostgreSQL after each poll of the replica that computes it (the leader, server/replicas), and a
 * replica that starts computing — a restarted dashboard, or a follower that took over — goes on
 * from it: a held loss stays held for its full {@link MEMORY_LOSS_HOLD_MS} across restarts. A
 * follower shows the saved state on its pages.
 */
import type { Registry } from "prom-client";
import { exportsFleetGauges } from "@/server/replicas/leader";
import { sharedState, type SharedState } from "@/server/replicas/shared-state";
import type { KeySource } from "../keys/source";
import {
  MemoryLossDetector,
  parseIdentity,
  type DetectorSnapshot,
  type MemoryLoss,
  type RedisIdentity,
} from "../shared/memory-loss";
import { registerObserveGauge } from "../core/observe-gauge";
import { masters, nodeId, type RedisLike } from "../redis/client";
import { countUpstream } from "../core/upstream-counter";

/** Least time between two reads of Redis' identity, whoever asks (scrapes, viewers). */
export const WATCH_MIN_INTERVAL_MS = 4000;
/** Name of the detector's saved state in the shared database (server/replicas/shared-state.ts). */
export const MEMORY_LOSS_STATE = "memory-loss";
/** A read of `INFO server` slower than this counts as Redis unreadable. */
const INFO_TIMEOUT_MS = 2000;

/** What the pages read from the watch. */
export interface MemoryWatchState {
  /** Losses held now (each for `MEMORY_LOSS_HOLD_MS`). */
  losses: MemoryLoss[];
  /** Since when (ms) Redis could not be read, `null` while it can. */
  unreadableSince: number | null;
}

/** The watch of one Redis client and its inspector. */
export class MemoryWatch {
  private readonly detector = new MemoryLossDetector();
  private lastPoll = 0;
  private polling: Promise<void> | null = null;
  private seenCountAt = 0;
  private unreadableSince: number | null = null;
  private recountWanted = false;
  /** Whether the last poll computed (leader or single) and the detector went on from the saved state. */
  private computing = false;
  private saved = "";

  constructor(
    private readonly redis: RedisLike,
    private readonly inspector: KeySource,
  ) {}

  /** Reads identity and the latest count when due; never throws. Resolves when done. */
  poll(): Promise<void> {
    if (this.polling) return this.polling;
    if (Date.now() - this.lastPoll < WATCH_MIN_INTERVAL_MS) return Promise.resolve();
    this.lastPoll = Date.now();
    this.polling = this.pollOnce().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    const now = Date.now();
    const leads = exportsFleetGauges();
    const shared = sharedState();
    // A follower shows what the leader saved; a replica that starts computing goes on from it.
    if (shared && (!leads || !this.computing)) await this.restore(shared, leads);
    this.computing = leads;
    try {
      if (this.redis.status !== "ready") throw new Error(`redis connection ${this.redis.status}`);
      const ids = await Promise.all(masters(this.redis).map((n) => this.identity(n)));
      this.unreadableSince = null;
      // A restart or failover: count as soon as the inspector allows, not at the next stale count.
      if (
        leads &&
        this.detector.observeIdentity(
          ids.filter((x): x is RedisIdentity => x !== null),
          now,
        )
      )
        this.recountWanted = true;
      if (this.recountWanted && this.inspector.refresh("auto").started) this.recountWanted = false;
    } catch {
      this.unreadableSince ??= now;
    }
    this.inspector.ensureFresh();
    if (!leads) return;
    this.takeCount();
    if (shared) await this.save(shared);
  }

  /** Takes the saved state; a leader whose read failed goes on from what it has (never throws). */
  private async restore(shared: SharedState, leads: boolean): Promise<void> {
    try {
      const s = await shared.load<DetectorSnapshot>(MEMORY_LOSS_STATE);
      if (s) this.detector.restore(s.value);
      if (s?.value.lastCount) this.seenCountAt = Math.max(this.seenCountAt, s.value.lastCount.at);
    } catch {
      if (!leads) return;
    }
  }

  /** Saves the detector's state when it changed (a failed write is retried at the next poll). */
  private async save(shared: SharedState): Promise<void> {
    const snap = this.detector.snapshot();
    const text = JSON.stringify(snap);
    if (text === this.saved) return;
    try {
      await shared.save(MEMORY_LOSS_STATE, snap);
      this.saved = text;
    } catch {
      /* kept in this process; saved at the next poll the database answers */
    }
  }

  private async identity(n: Parameters<typeof nodeId>[0]): Promise<RedisIdentity | null> {
    const info = await countUpstream("redis", () =>
      Promise.race([
        n.info("server"),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("INFO server timed out")), INFO_TIMEOUT_MS).unref(),
        ),
      ]),
    );
    return parseIdentity(nodeId(n), info);
  }

  /**
   * Hands a count the detector has not seen yet to it — only from a poll, right after Redis'
   * identity was read: a count that already shows a restart's loss is then put down to the restart.
   */
  private takeCount(): void {
    const r = this.inspector.current().result;
    if (!r || r.finishedAt <= this.seenCountAt) return;
    this.seenCountAt = r.finishedAt;
    this.detector.observeCount(r.handlers, r.finishedAt);
  }

  /** Losses held now and the unreadable mark, as of the last poll. */
  state(): MemoryWatchState {
    return { losses: this.detector.losses(Date.now()), unreadableSince: this.unreadableSince };
  }

  /** Gauge values: every counted handler at 0, a held loss at its share. */
  gaugeValues(): Array<{ labels: { service: string; handler: string }; value: number }> {
    const key = (h: { service: string; handler: string }) => `${h.service}\u0000${h.handler}`;
    const out = new Map<string, { labels: { service: string; handler: string }; value: number }>();
    for (const h of this.detector.counted()) out.set(key(h), { labels: h, value: 0 });
    for (const l of this.state().losses)
      out.set(key(l), { labels: { service: l.service, handler: l.handler }, value: l.share });
    return [...out.values()];
  }
}

type G = typeof globalThis & { __dedupHealthMemoryWatches?: WeakMap<object, MemoryWatch> };

/**
 * The watch of `redis` (one per client), or null without Redis or with an in-memory key source.
 * Kept on `globalThis`: the route bundles and `instrumentation.ts` load their own copies of this
 * module, and the scrape's gauge and the overview must read the same watch.
 */
export function memoryWatchOf(redis: RedisLike | null, inspector: KeySource | null): MemoryWatch | null {
  if (!redis || !inspector || inspector.kind !== "redis") return null;
  const watches = ((globalThis as G).__dedupHealthMemoryWatches ??= new WeakMap());
  let w = watches.get(redis);
  if (!w) watches.set(redis, (w = new MemoryWatch(redis, inspector)));
  return w;
}

/**
 * Registers `dedup_memory_lost_ratio` on `registry` (get-or-create); each scrape polls the watch
 * (bounded) and reports its held losses.
 */
export function registerMemoryLostGauge(registry: Registry, watch: MemoryWatch): void {
  registerObserveGauge(
    registry,
    "memoryLost",
    "Share (0..1) of a handler's dedup keys lost at once (Redis restarted empty, flushed, or failed over), against the last count minus what could expire; held 30 min",
    async () => {
      await watch.poll();
      return watch.gaugeValues();
    },
  );
}
