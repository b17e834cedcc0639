/** Options of a {@link SharedCache}. */
export interface SharedCacheOptions {
  /** How long a successful answer is served from memory. @default 2000 */
  ttlMs: number;
  /** How long a failure is remembered (so a down upstream is not hammered). @default 1000 */
  errorTtlMs: number;
  /** Entries kept; the oldest is dropped beyond it. @default 500 */
  maxEntries: number;
}

/** Defaults of {@link SharedCacheOptions}. */
export const DEFAULT_SHARED_CACHE_OPTIONS: SharedCacheOptions = { ttlMs: 2000, errorTtlMs: 1000, maxEntries: 500 };

interface Entry {
  at: number;
  ok: boolean;
  value: unknown;
  pending: Promise<unknown> | null;
}

/**
 * Singleflight plus a short TTL cache: concurrent calls with one key share one upstream call, and
 * its answer (or its error) is reused for `ttlMs` (`errorTtlMs`). With it, 50 dashboards polling
 * the same view cost the upstream what one does.
 */
export class SharedCache {
  private readonly opts: SharedCacheOptions;
  private readonly entries = new Map<string, Entry>();
  /** Calls that actually ran the loader (cache misses), for tests. */
  loads = 0;

  constructor(opts: Partial<SharedCacheOptions> = {}) {
    const o = { ...DEFAULT_SHARED_CACHE_OPTIONS, ...opts };
    if (!(o.ttlMs >= 0 && o.ttlMs <= 3_600_000)) throw new RangeError(`ttlMs: expected 0..3600000, got ${o.ttlMs}`);
    if (!(o.errorTtlMs >= 0 && o.errorTtlMs <= 3_600_000))
      throw new RangeError(`errorTtlMs: expected 0..3600000, got ${o.errorTtlMs}`);
    if (!(Number.isInteger(o.maxEntries) && o.maxEntries >= 1))
      throw new RangeError(`maxEntries: expected an integer ≥ 1, got ${o.maxEntries}`);
    this.opts = o;
  }

  /** The cached answer for `key`, the in-flight one, or a new call of `load`. */
  get<T>(key: string, load: () => Promise<T>, ttlMs = this.opts.ttlMs): Promise<T> {
    const now = Date.now();
    const e = this.entries.get(key);
    if (e) {
      if (e.pending) return e.pending as Promise<T>;
      if (now - e.at < (e.ok ? ttlMs : this.opts.errorTtlMs))
        return e.ok ? Promise.resolve(e.value as T) : Promise.reject(e.value);
    }
    this.loads++;
    const entry: Entry = { at: now, ok: false, value: undefined, pending: null };
    const p = load().then(
      (v) => {
        entry.at = Date.now();
        entry.ok = true;
        entry.value = v;
        entry.pending = null;
        return v;
      },
      (err: unknown) => {
        entry.at = Date.now();
        entry.ok = false;
        entry.value = err;
        entry.pending = null;
        throw err;
      },
    );
    entry.pending = p;
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.opts.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return p;
  }
}
