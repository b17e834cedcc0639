/**
 * The embedded mode's key inspector: the same surface as the Redis `KeyInspector`
 * ({@link KeySource}) over the process's in-memory dedup stores, so `/api/handlers`, `/api/keys`,
 * `/api/keys/lookup`, the overview's key counts and capacity answer the same shapes in both modes.
 * Counts, TTL buckets, states and keys without TTL are exact (every key is read); bytes per key are
 * an estimate of the process heap a key holds (labelled `bytesEstimated`).
 */
import { ALL_DEDUP_KEYS_GLOB } from "@/names/keys";
import type { MemoryKey, MemoryKeyStore } from "@/server/dedup-store";
import type { KeyState } from "@/lib/api/common";
import type { HandlerKeys, ScanProgress, TtlBucket } from "@/lib/api/handlers";
import type { KeyEntry, KeyLookupResponse, KeysResponse } from "@/lib/api/keys";
import { BadRequestError } from "../core/errors";
import { PrefixGlobs, prefixOfKey, splitPrefix } from "./glob";
import { declaredHandlers, declaredPrefix } from "../core/handler-registry";
import { splitByState, TTL_BUCKETS } from "./accum";
import { BackgroundCount } from "./background-count";
import type { Inspection, KeySource } from "./source";
import { classifyValue, donePosition } from "./samples";

/**
 * Estimated heap bytes of one entry beyond its key and value characters: the Map slot, the entry
 * object with its expiry (a heap number) and two string headers (V8, pointer compression).
 */
export const MEMORY_ENTRY_OVERHEAD_BYTES = 64;
/** Most keys one page of the key browser returns. */
const MAX_PAGE = 1000;
/** Entries read between two yields to the event loop while counting. */
const YIELD_EVERY = 20_000;

/** Bytes a key is estimated to hold in the process heap. */
export function estimateBytes(key: string, value: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(value) + MEMORY_ENTRY_OVERHEAD_BYTES;
}

function bucketOf(ttl: number): number {
  const i = TTL_BUCKETS.findIndex((b) => b.maxMs !== null && ttl < b.maxMs);
  return i < 0 ? TTL_BUCKETS.length - 1 : i;
}

interface Acc {
  prefix: string;
  count: number;
  noTtl: number;
  buckets: number[];
  leases: number[];
  ttls: number[];
  settledMin: number;
  bytes: number;
  states: Record<KeyState, number>;
}

/** Options of the {@link MemoryInspector}. */
export interface MemoryInspectorOptions {
  prefixes: readonly string[];
  /** A result older than this is recounted by `ensureFresh()`. @default 5000 */
  staleAfterMs: number;
  /** Minimum time between two counts started by `refresh()`. @default 2000 */
  refreshMinIntervalMs: number;
  /** Distinct handler prefixes tracked; beyond it keys go to `(other)`. @default 1000 */
  maxHandlers: number;
}

/** Counts, pages and looks up the keys of the in-memory stores; see the file comment. */
export class MemoryInspector extends BackgroundCount implements KeySource {
  readonly kind = "memory" as const;
  private readonly opts: MemoryInspectorOptions;
  private readonly globs: PrefixGlobs;

  constructor(
    private readonly stores: () => readonly MemoryKeyStore[],
    opts: Partial<MemoryInspectorOptions> = {},
  ) {
    const resolved = {
      prefixes: [ALL_DEDUP_KEYS_GLOB],
      staleAfterMs: 5000,
      refreshMinIntervalMs: 2000,
      maxHandlers: 1000,
      ...opts,
    };
    super({
      staleAfterMs: resolved.staleAfterMs,
      refreshMinIntervalMs: resolved.refreshMinIntervalMs,
      busyRetryAfterMs: 500,
    });
    this.opts = resolved;
    this.globs = new PrefixGlobs(this.opts.prefixes);
  }

  get prefixes(): readonly string[] {
    return this.globs.globs;
  }

  /** Counts every key. Always exact, whatever the mode: the store is in this process. */
  protected async count(): Promise<Inspection> {
    const startedAt = Date.now();
    const progress = (scanned: number, total: number, done: boolean): ScanProgress => ({
      scanned,
      total,
      done,
      mode: "exact",
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: done ? new Date().toISOString() : null,
    });
    this.state = { ...this.state, progress: progress(0, this.state.progress.total, false) };
    const accs = new Map<string, Acc>();
    let seen = 0;
    for (const store of this.stores()) {
      for (const e of store.entries()) {
        if (++seen % YIELD_EVERY === 0) {
          this.state = { ...this.state, progress: progress(seen, Math.max(seen, this.state.progress.total), false) };
          await new Promise((r) => setImmediate(r));
        }
        if (!this.globs.matches(e.key)) continue;
        const own = prefixOfKey(e.key);
        const prefix = accs.has(own) || accs.size < this.opts.maxHandlers ? own : "(other)";
        let a = accs.get(prefix);
        if (!a) {
          a = {
            prefix,
            count: 0,
            noTtl: 0,
            buckets: TTL_BUCKETS.map(() => 0),
            leases: TTL_BUCKETS.map(() => 0),
            ttls: [],
            settledMin: -1,
            bytes: 0,
            states: { processing: 0, done: 0, marked: 0, other: 0 },
          };
          accs.set(prefix, a);
        }
        const state = classifyValue(e.value);
        a.count++;
        a.states[state]++;
        a.bytes += estimateBytes(e.key, e.value);
        if (e.expiresAt === null) {
          a.noTtl++;
          continue;
        }
        const ttl = Math.max(0, e.expiresAt - Date.now());
        const b = bucketOf(ttl);
        a.buckets[b]!++;
        a.ttls.push(ttl);
        if (state === "processing") a.leases[b]!++;
        else if (a.settledMin < 0 || ttl < a.settledMin) a.settledMin = ttl;
      }
    }
    const done = progress(seen, seen, true);
    this.state = { ...this.state, progress: done };
    return {
      mode: "exact",
      startedAt,
      finishedAt: Date.now(),
      total: seen,
      handlers: [...accs.values()].map((a) => handlerKeys(a, done)).sort((x, y) => x.prefix.localeCompare(y.prefix)),
      calls: 0,
      maxCallMicros: 0,
    };
  }

  /**
   * One page of `<prefix>:*` keys inside the globs, in key order after the cursor (the last key
   * returned): a key present the whole time is returned exactly once, whatever expires meanwhile.
   */
  browse(q: { prefix: string; cursor?: string; count: number }): KeysResponse {
    const after = decodeMemoryCursor(q.cursor);
    const want = Math.min(MAX_PAGE, Math.max(1, q.count));
    const found: MemoryKey[] = [];
    for (const e of this.entries()) {
      if (e.key.startsWith(`${q.prefix}:`) && (after === null || e.key > after) && this.globs.matches(e.key))
        found.push(e);
    }
    found.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    const now = Date.now();
    const keys = found.slice(0, want).map((e) => entryOf(e, now));
    const last = keys.at(-1);
    return {
      generatedAt: new Date().toISOString(),
      prefix: q.prefix,
      keys,
      cursor: found.length > want && last ? encodeMemoryCursor(last.key) : null,
      visited: keys.length,
    };
  }

  /** Looks `<prefix>:<uuid>` up under the prefixes on screen, declared and counted (no iteration). */
  async lookup(q: { uuid: string; prefix?: string }, maxPrefixes: number): Promise<KeyLookupResponse> {
    if (!this.state.result) await this.run(); // the counted prefixes are candidates: count once first
    const prefixes = new Set<string>(q.prefix ? [q.prefix] : []);
    for (const p of declaredHandlers().map(declaredPrefix)) prefixes.add(p);
    for (const h of this.state.result?.handlers ?? []) prefixes.add(h.prefix);
    const candidates = [...prefixes]
      .map((p) => `${p}:${q.uuid}`)
      .filter((k) => this.globs.matches(k))
      .slice(0, maxPrefixes);
    const now = Date.now();
    const matches: KeyLookupResponse["matches"] = [];
    for (const key of candidates) {
      for (const store of this.stores()) {
        const value = store.get(key);
        if (value === null) continue;
        const ttl = store.pttl(key);
        const prefix = key.slice(0, key.length - q.uuid.length - 1);
        const owner = splitPrefix(prefix);
        matches.push({
          ...entryOf({ key, value, expiresAt: ttl >= 0 ? now + ttl : null }, now),
          service: owner.service,
          handler: owner.handler,
          prefix,
        });
        break;
      }
    }
    return { generatedAt: new Date().toISOString(), uuid: q.uuid, checkedPrefixes: candidates.length, matches };
  }

  private *entries(): Iterable<MemoryKey> {
    for (const s of this.stores()) yield* s.entries();
  }
}

function entryOf(e: MemoryKey, now: number): KeyEntry {
  return {
    key: e.key,
    uuid: e.key.slice(e.key.lastIndexOf(":") + 1),
    state: classifyValue(e.value),
    record: donePosition(e.value),
    ttlMs: e.expiresAt === null ? -1 : Math.max(0, e.expiresAt - now),
    bytes: estimateBytes(e.key, e.value),
    bytesEstimated: true,
  };
}

function handlerKeys(a: Acc, scan: ScanProgress): HandlerKeys {
  const owner = splitPrefix(a.prefix);
  a.ttls.sort((x, y) => x - y);
  const split = splitByState(a.count, a.states, a.count, true);
  const ttlBuckets: TtlBucket[] = TTL_BUCKETS.map((b, i) => ({
    label: b.label,
    minMs: i === 0 ? 0 : (TTL_BUCKETS[i - 1]!.maxMs ?? 0),
    maxMs: b.maxMs,
    count: a.buckets[i] ?? 0,
    processing: a.leases[i] ?? 0,
  }));
  return {
    service: owner.service,
    handler: owner.handler,
    prefix: a.prefix,
    keyCount: a.count,
    exact: true,
    errorBound: 0,
    noTtlCount: a.noTtl,
    noTtlExact: true,
    ttlSampled: false,
    ttlBuckets,
    bytesPerKey: a.count > 0 ? Math.round(a.bytes / a.count) : null,
    bytesEstimated: true,
    states: a.states,
    sampleSize: a.count,
    byState: { processing: split.processing, done: split.done, marked: split.marked, other: split.other, exact: true },
    leaseShare: split.leaseShare,
    settledMinTtlMs: a.settledMin >= 0 ? a.settledMin : null,
    countedAt: scan.finishedAt ?? new Date().toISOString(),
    ttlObserved: a.ttls.length
      ? { minMs: a.ttls[0]!, maxMs: a.ttls[a.ttls.length - 1]!, p50Ms: a.ttls[Math.floor(a.ttls.length / 2)]! }
      : null,
    scan,
  };
}

/** `m.<base64url of the last key returned>`. */
export function encodeMemoryCursor(key: string): string {
  return `m.${Buffer.from(key).toString("base64url")}`;
}

function decodeMemoryCursor(cursor: string | undefined): string | null {
  if (!cursor) return null;
  const m = /^m\.([A-Za-z0-9_-]{1,8000})$/.exec(cursor);
  if (!m) throw new BadRequestError("cursor: expected a cursor returned by a previous page");
  return Buffer.from(m[1]!, "base64url").toString();
}
