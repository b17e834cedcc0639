/**
 * The space-saving sketch of the swallowed copies (see ./hot-keys.ts): one window of one handler's
 * counters, what a hot key and a merged table are, and the merge of several sketches (windows,
 * replicas) with the same guarantee over the union of their streams.
 */
import { DUPLICATE_CAUSE, type DuplicateCause } from "../../../names/dedup";

/** One swallowed copy, as the Deduplicator reports it. */
export interface SwallowedCopy {
  /** The full repository key (`<service>:dedup:<handler>:<uuid>`). */
  key: string;
  uuid: string;
  handler: string;
  topic: string;
  cause: DuplicateCause;
  /** The copy's position `topic:partition:offset`, when the transport gave one. */
  position: string | undefined;
}

/** One hot key: its (over)estimated count, the overestimate bound, and what the copies were. */
export interface HotKey {
  key: string;
  uuid: string;
  handler: string;
  topic: string;
  /** Swallowed copies counted (an upper bound: the true count is at least `count − error`). */
  count: number;
  /** How much of `count` may belong to keys this counter replaced. */
  error: number;
  /** Copies by cause, counted since this key took its counter. */
  byCause: Record<DuplicateCause, number>;
  /** Position of the latest copy (for "open the record"), when known. */
  lastPosition: string | null;
  /** Time of the latest copy (ms since the epoch). */
  lastAt: number;
}

/** One handler's merged table, heaviest first. */
export interface HotKeyTable {
  handler: string;
  /** Start of the oldest window the table covers (ms since the epoch). */
  since: number;
  /** Copies swallowed in the windows covered (exact). */
  total: number;
  /** Counters per window and sketch: a key with fewer than `total / capacity` copies may be missing. */
  capacity: number;
  keys: HotKey[];
}

const noCauses = (): Record<DuplicateCause, number> =>
  ({ [DUPLICATE_CAUSE.redelivery]: 0, [DUPLICATE_CAUSE.republish]: 0, [DUPLICATE_CAUSE.unknown]: 0 }) as Record<
    DuplicateCause,
    number
  >;

/** One window of one handler: the space-saving counters. */
export class Sketch {
  readonly entries = new Map<string, HotKey>();
  total = 0;
  constructor(
    readonly start: number,
    private readonly capacity: number,
  ) {}

  /** The smallest counter (0 while a counter is free). */
  floor(): number {
    if (this.entries.size < this.capacity) return 0;
    let min = Infinity;
    for (const e of this.entries.values()) if (e.count < min) min = e.count;
    return min;
  }

  offer(c: SwallowedCopy, at: number): void {
    this.total++;
    let e = this.entries.get(c.key);
    if (!e) {
      let floor = 0;
      if (this.entries.size >= this.capacity) {
        // Replace the smallest counter: O(capacity) only when a new key arrives at a full table.
        let victim: HotKey | undefined;
        for (const x of this.entries.values()) if (!victim || x.count < victim.count) victim = x;
        floor = victim!.count;
        this.entries.delete(victim!.key);
      }
      e = {
        key: c.key,
        uuid: c.uuid,
        handler: c.handler,
        topic: c.topic,
        count: floor,
        error: floor,
        byCause: noCauses(),
        lastPosition: null,
        lastAt: at,
      };
      this.entries.set(c.key, e);
    }
    e.count++;
    e.byCause[c.cause]++;
    if (c.position !== undefined) e.lastPosition = c.position;
    e.lastAt = at;
  }
}

/** A handler's sketches as the merge reads them. */
export interface SketchView {
  entries: ReadonlyMap<string, HotKey>;
  total: number;
  floor: number;
}

/**
 * Merges sketches into one table of at most `capacity` keys, heaviest first (ties: latest copy
 * first). A key missing from a sketch gets that sketch's floor added to its error.
 */
export function mergeSketches(
  handler: string,
  since: number,
  capacity: number,
  sketches: readonly SketchView[],
): HotKeyTable {
  const out = new Map<string, HotKey>();
  for (const s of sketches) {
    for (const e of s.entries.values()) {
      const m = out.get(e.key);
      if (!m) {
        out.set(e.key, { ...e, byCause: { ...e.byCause } });
        continue;
      }
      m.count += e.count;
      m.error += e.error;
      for (const c of Object.keys(e.byCause) as DuplicateCause[]) m.byCause[c] += e.byCause[c];
      if (e.lastAt >= m.lastAt) {
        m.lastAt = e.lastAt;
        m.lastPosition = e.lastPosition ?? m.lastPosition;
      }
    }
  }
  for (const m of out.values()) {
    for (const s of sketches) {
      if (!s.entries.has(m.key)) {
        m.count += s.floor;
        m.error += s.floor;
      }
    }
  }
  const keys = [...out.values()].sort((a, b) => b.count - a.count || b.lastAt - a.lastAt).slice(0, capacity);
  return { handler, since, total: sketches.reduce((a, s) => a + s.total, 0), capacity, keys };
}
