/**
 * Hot keys: which UUIDs the Deduplicator swallowed most often lately, in fixed memory. A
 * space-saving sketch (Metwally, Agrawal, El Abbadi 2005) of `capacity` counters per handler and
 * window: a key already counted adds one; a new key takes a free counter or, when all are taken,
 * replaces the smallest counter `m` and starts at `m + 1` with the overestimate `error = m`. Every
 * key swallowed more than `n / capacity` times in a window of `n` swallowed copies is in the table,
 * and its true count lies in `[count − error, count]`. A duplicate storm of one UUID is therefore
 * always at the top, whatever else was swallowed.
 *
 * Two tumbling windows are kept (the current one and the one before), so a storm that started just
 * before a window turned over is still shown; {@link HotKeys.top} merges them. Sketches of several
 * Deduplicators (replicas) merge the same way ({@link mergeHotKeys}): counts add up, and a key one
 * sketch does not hold gets that sketch's smallest counter added to its error (it may have been
 * evicted there) — the merged counts keep the same guarantee over the union of the streams.
 */
import { mergeSketches, Sketch, type HotKeyTable, type SketchView, type SwallowedCopy } from "./hot-key-sketch";

/** Options of {@link HotKeys}. */
export interface HotKeysOptions {
  /** Counters per handler and window (fixed memory: `2 × capacity` entries per handler). 1..1000. @default 20 */
  capacity: number;
  /** Length of one tumbling window. 1000..86400000 ms. @default 300000 (the alerts' 5 min) */
  windowMs: number;
  /** Distinct handlers tracked; a further handler is not tracked. 1..10000. @default 256 */
  maxHandlers: number;
}

/** Defaults of {@link HotKeysOptions}. */
export const DEFAULT_HOT_KEYS_OPTIONS: HotKeysOptions = { capacity: 20, windowMs: 300_000, maxHandlers: 256 };

/**
 * The swallowed copies' heavy hitters per handler over the last one to two windows, in fixed memory
 * (see the file's comment). One per Deduplicator; the dashboard merges them ({@link mergeHotKeys}).
 */
export class HotKeys {
  readonly options: HotKeysOptions;
  private readonly windows = new Map<string, { cur: Sketch; prev: Sketch | null }>();
  /** Time of the latest copy (ms), to drop an idle sketch from a board. */
  lastAt = 0;

  constructor(
    opts: Partial<HotKeysOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    const o = { ...DEFAULT_HOT_KEYS_OPTIONS, ...opts };
    const bad = (name: string, range: string) => new RangeError(`hotKeys: ${name} must be an integer in ${range}`);
    if (!(Number.isInteger(o.capacity) && o.capacity >= 1 && o.capacity <= 1000)) throw bad("capacity", "1..1000");
    if (!(Number.isInteger(o.windowMs) && o.windowMs >= 1000 && o.windowMs <= 86_400_000))
      throw bad("windowMs", "1000..86400000 (ms)");
    if (!(Number.isInteger(o.maxHandlers) && o.maxHandlers >= 1 && o.maxHandlers <= 10_000))
      throw bad("maxHandlers", "1..10000");
    this.options = o;
  }

  /** The window start of time `t` (windows are aligned to multiples of `windowMs`, so replicas agree). */
  private windowOf(t: number): number {
    return t - (t % this.options.windowMs);
  }

  /** The handler's windows turned over to `t` (the one before the current survives one turn). */
  private roll(handler: string, t: number): { cur: Sketch; prev: Sketch | null } | undefined {
    const w = this.windows.get(handler);
    if (!w) return undefined;
    const start = this.windowOf(t);
    if (w.cur.start === start) return w;
    const prev = w.cur.start === start - this.options.windowMs ? w.cur : null;
    const next = { cur: new Sketch(start, this.options.capacity), prev };
    this.windows.set(handler, next);
    return next;
  }

  /**
   * Counts one swallowed copy; returns how many copies of its key this window surely held (the
   * counter's lower bound `count − error`: 1 for a key that just took a counter), which the
   * Deduplicator's sampled logging uses.
   */
  record(c: SwallowedCopy): number {
    const t = this.now();
    this.lastAt = t;
    let w = this.roll(c.handler, t);
    if (!w) {
      if (this.windows.size >= this.options.maxHandlers) return 0;
      w = { cur: new Sketch(this.windowOf(t), this.options.capacity), prev: null };
      this.windows.set(c.handler, w);
    }
    w.cur.offer(c, t);
    const e = w.cur.entries.get(c.key);
    return e ? e.count - e.error : 0;
  }

  /**
   * Starts an empty sketch for a handler registered before its first swallowed copy, so that its
   * exported error bound says "measured, nothing swallowed" rather than nothing at all.
   */
  track(handler: string): void {
    if (this.windows.has(handler) || this.windows.size >= this.options.maxHandlers) return;
    this.windows.set(handler, { cur: new Sketch(this.windowOf(this.now()), this.options.capacity), prev: null });
  }

  /** The handlers with a sketch. */
  handlers(): string[] {
    return [...this.windows.keys()];
  }

  /** The sketches of a handler for a merge: the previous window's (if still adjacent) and the current one's. */
  sketchesOf(handler: string): { since: number; sketches: SketchView[] } | undefined {
    const w = this.roll(handler, this.now());
    if (!w) return undefined;
    const list = w.prev ? [w.prev, w.cur] : [w.cur];
    return {
      since: list[0]!.start,
      sketches: list.map((s) => ({ entries: s.entries, total: s.total, floor: s.floor() })),
    };
  }

  /** The handler's table over the current and the previous window, heaviest first. */
  top(handler: string): HotKeyTable | undefined {
    const s = this.sketchesOf(handler);
    return s ? mergeSketches(handler, s.since, this.options.capacity, s.sketches) : undefined;
  }
}

/**
 * Whether the `n`-th swallowed copy of a key in a window is logged under sampled logging: the 1st,
 * 10th, 100th, 1000th… — a new repeated UUID is always logged once, a storm of 500 copies three
 * times (1, 10, 100), so logs show every hot UUID without one line per copy.
 */
export function sampledDuplicateLog(n: number): boolean {
  if (n < 1) return false;
  while (n % 10 === 0) n /= 10;
  return n === 1;
}

/**
 * Counts a swallowed copy on `hot` (when kept) and logs it as `mode` says (see
 * `DeduplicatorOptions.logDuplicates`).
 */
export function noteSwallowed(
  hot: HotKeys | null,
  c: SwallowedCopy,
  mode: boolean | "sampled",
  logger: (line: string) => void,
): void {
  const n = hot ? hot.record(c) : 1;
  if (mode === true || (mode === "sampled" && sampledDuplicateLog(n))) {
    logger(
      `[dedup] duplicate swallowed (${c.cause}, copy ${n} this window): handler=${c.handler} topic=${c.topic} uuid=${c.uuid} key=${c.key}`,
    );
  }
}
