/**
 * The live demo's store faults: latency and failing calls added to every dedup store call (what
 * the p99 and error-reason panels show), and in real mode the Redis cut-off, which disconnects the
 * consumer's own Redis client for a while.
 */
import { FaultyRepository, type DedupRepository } from "@/server/dedup";
import type { RedisClient } from "@/server/dedup-redis";
import type { DemoFaults, DemoFaultsPatch } from "@/lib/api/demo";

/** The faults as `GET /api/demo/faults` shows them, without the demo's mode and running flag. */
export type StoreFaultsState = Omit<DemoFaults, "mode" | "running">;

/** Injects the store faults a presenter switches on. */
export class StoreFaults {
  /** The store as the handlers see it: the real one behind the injected latency and errors. */
  readonly repository: FaultyRepository;
  private cutoffUntil: number | null = null;
  private cutoffTimer: NodeJS.Timeout | null = null;

  /** `redis`: the consumer's own client (real mode), what the cut-off disconnects; none in embedded mode. */
  constructor(
    store: DedupRepository,
    private readonly redis: RedisClient | undefined,
  ) {
    this.repository = new FaultyRepository(store);
  }

  /** The faults now. */
  state(): StoreFaultsState {
    const active = this.cutoffUntil !== null && this.cutoffUntil > Date.now();
    return {
      latencyMs: this.repository.faults.latencyMs,
      errorRate: this.repository.faults.errorRate,
      redisCutoff: {
        available: this.redis !== undefined,
        active,
        until: active ? new Date(this.cutoffUntil!).toISOString() : null,
      },
    };
  }

  /**
   * Merges the patch (already validated). `redisCutoffMs` > 0 disconnects the consumer's Redis
   * client for that long (real mode only: a RangeError otherwise); 0 reconnects now.
   */
  set(p: DemoFaultsPatch): void {
    this.repository.set({
      ...(p.latencyMs !== undefined && { latencyMs: p.latencyMs }),
      ...(p.errorRate !== undefined && { errorRate: p.errorRate }),
    });
    if (p.redisCutoffMs === undefined) return;
    const redis = this.redis;
    if (!redis)
      throw new RangeError(
        "redisCutoffMs: the Redis cut-off needs real mode (REDIS_URL); use errorRate in embedded mode",
      );
    if (this.cutoffTimer) clearTimeout(this.cutoffTimer);
    this.cutoffTimer = null;
    if (p.redisCutoffMs > 0) {
      this.cutoffUntil = Date.now() + p.redisCutoffMs;
      redis.disconnect();
      this.cutoffTimer = setTimeout(() => this.reconnect(), p.redisCutoffMs);
    } else {
      this.reconnect();
    }
  }

  /** Drops a pending reconnect (the demo stops). */
  stop(): void {
    if (this.cutoffTimer) clearTimeout(this.cutoffTimer);
  }

  private reconnect(): void {
    this.cutoffUntil = null;
    this.cutoffTimer = null;
    const r = this.redis;
    if (r && (r.status === "end" || r.status === "close")) r.connect().catch(() => undefined);
  }
}
