/**
 * The background recount both key sources share (the Redis `KeyInspector` and the embedded
 * `MemoryInspector`): one count at a time, the last completed result kept and served while the
 * next one runs, refreshes rate-limited, a stale or failed result counted again in the background.
 * A source supplies only `count(mode)`, which publishes its progress through `state`.
 */
import type { ScanProgress } from "@/lib/api/handlers";
import { recountShare, type Inspection, type InspectorState } from "./source";

/** How often a source counts again. */
export interface RecountTiming {
  /** A result older than this is recounted by `ensureFresh()`. */
  staleAfterMs: number;
  /** Minimum time between two counts started by `refresh()` or `ensureFresh()`. */
  refreshMinIntervalMs: number;
  /** `retryAfterMs` that `refresh()` answers while a count runs. */
  busyRetryAfterMs: number;
}

/** A count mode: `estimate` skips an exact count; `exact` asks for no more than `auto`. */
export type CountMode = "auto" | "exact" | "estimate";

/** Progress before any count. */
export function idleProgress(): ScanProgress {
  return { scanned: 0, total: 0, done: false, mode: "exact", startedAt: null, finishedAt: null };
}

/** Runs a source's count in the background and keeps its last result; see the file comment. */
export abstract class BackgroundCount {
  /** Current result, progress of a running count, and last error. */
  protected state: InspectorState = { result: null, progress: idleProgress(), error: null };
  private running: Promise<Inspection> | null = null;
  private lastStart = 0;

  protected constructor(private readonly timing: RecountTiming) {}

  /** Counts the keys once; publishes progress (and an early result, if any) through `state`. */
  protected abstract count(mode: CountMode): Promise<Inspection>;

  /** Current result, progress of a running count, and last error. */
  current(): InspectorState {
    return this.state;
  }

  /** Whether a count is in progress. */
  get busy(): boolean {
    return this.running !== null;
  }

  /**
   * Progress (0..1) of a recount running now, `null` when none runs. **Every page shows
   * `current().result`** — the last completed count, with its `countedAt` — and this beside it
   * ("2,013 keys at 18:20:04 · recount 40 %"), never the partial totals of the running count.
   */
  recount(): number | null {
    return recountShare(this.running !== null, this.state.progress);
  }

  /**
   * Starts a count in the background unless one runs or the last one started less than
   * `refreshMinIntervalMs` ago (whoever asked).
   */
  refresh(mode: CountMode = "auto"): { started: boolean; retryAfterMs: number } {
    if (this.running) return { started: false, retryAfterMs: this.timing.busyRetryAfterMs };
    const wait = this.lastStart + this.timing.refreshMinIntervalMs - Date.now();
    if (wait > 0) return { started: false, retryAfterMs: wait };
    void this.run(mode).catch(() => {});
    return { started: true, retryAfterMs: 0 };
  }

  /** Starts a background count when there is no result yet, it is older than `staleAfterMs`, or the last count failed. */
  ensureFresh(): void {
    if (this.running) return;
    const { staleAfterMs, refreshMinIntervalMs } = this.timing;
    const r = this.state.result;
    const sinceStart = Date.now() - this.lastStart;
    const stale = !r || Date.now() - r.finishedAt > staleAfterMs;
    const retryDue = this.state.error !== null && sinceStart > Math.min(refreshMinIntervalMs, 5000);
    if ((stale && sinceStart > refreshMinIntervalMs) || (!r && this.lastStart === 0) || retryDue)
      void this.run("auto").catch(() => {});
  }

  /** Counts now (or joins the running count) and resolves with its final result. */
  run(mode: CountMode = "auto"): Promise<Inspection> {
    if (this.running) return this.running;
    this.lastStart = Date.now();
    // Visible at once: a viewer polling right after `refresh` sees a running count, not the last one.
    const startedAt = new Date().toISOString();
    this.state = {
      ...this.state,
      progress: {
        scanned: 0,
        total: this.state.progress.total,
        done: false,
        mode: mode === "estimate" ? "estimate" : "exact",
        startedAt,
        finishedAt: null,
      },
    };
    const p = this.count(mode).then(
      (r) => {
        this.state = { ...this.state, result: r, error: null };
        return r;
      },
      (e: unknown) => {
        const progress = { ...this.state.progress, done: true, finishedAt: new Date().toISOString() };
        this.state = { ...this.state, error: e instanceof Error ? e.message : String(e), progress };
        throw e;
      },
    );
    this.running = p.finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
