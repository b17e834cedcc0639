/** The Redis key inspector's options, their defaults and their checks. */
import { ALL_DEDUP_KEYS_GLOB } from "@/names/keys";

/** Options of the `KeyInspector` (server/observe/keys/inspector.ts). */
export interface KeyInspectorOptions {
  /** Globs keys must match (`DEDUP_PREFIXES`). @default ["*:dedup:*"] */
  prefixes: readonly string[];
  /** Keyspace size (DBSIZE, summed over masters) up to which counts are exact. @default 2_000_000 */
  exactMaxKeys: number;
  /**
   * Most SCAN COUNT of one chunk, 1..1000. A script call runs chunks until its next one would pass
   * `maxCallMicros`, and the chunk's COUNT is lowered while one chunk takes more than a third of it
   * (a SCAN sent from the client: more than all of it).
   * @default 1000
   */
  scanCount: number;
  /** Keys sampled for an estimate, over all masters (a 20% share within ±3.3% at 99.9%). @default 40_000 */
  estimateSamples: number;
  /** Keys per handler whose value, PTTL and `MEMORY USAGE` are read (uniform sample). 0..2000. @default 500 */
  sampleKeysPerHandler: number;
  /**
   * Minimum time between two scans started by `refresh()` (`GET /api/handlers?refresh=1`): one
   * limit for all callers together, not per caller. @default 10_000
   */
  refreshMinIntervalMs: number;
  /** A result older than this is refreshed in the background by `ensureFresh()`. @default 60_000 */
  staleAfterMs: number;
  /**
   * Server time (Redis `TIME` inside the script, or around a client's `SCAN` in one transaction) one
   * call should stay under; `count` halves above it and grows while below
   * half of it. Under a third of the 5 ms budget: on a 2-core VM a
   * hypervisor pause adds 3-4 ms to whatever command runs (a plain `SCAN … COUNT 150` was logged at
   * 3.6 ms, `COUNT 1000` passed 3 ms in 43 of 400 calls), so a call must be short for the pause to
   * stay under 5 ms. 200..4000 µs. @default 1500
   */
  maxCallMicros: number;
  /**
   * Share of Redis server time the exact scan may use, however often it is asked for: after each
   * call of `m` µs of server time it pauses `m × (1 / share − 1)` µs before the next (0.05: a call of 1.5 ms
   * is followed by 28.5 ms of nothing; 313k keys take ~1.1 s of Redis time over ~22 s). 0.01..1.
   * @default 0.05
   */
  maxRedisShare: number;
  /** Distinct handler prefixes tracked; beyond it keys go to `(other)`. @default 1000 */
  maxHandlers: number;
  /**
   * How the exact scan learns TTLs. `every-key`: the scan script PTTLs each matched key on every
   * master whose `INFO keyspace` shows keys without TTL (keys − expires > 0): exact no-TTL counts
   * and TTL buckets; a master with none is only counted, by `SCAN` from the client (its no-TTL count
   * is exactly 0), and the buckets then come from the samples. `sample`: SCAN from the client only
   * counts; TTL buckets and keys without TTL are scaled from each handler's uniform sample of
   * `sampleKeysPerHandler` keys (labelled `noTtlExact: false`) unless `INFO keyspace` proves 0. The
   * estimate always scales from samples.
   * @default "every-key"
   */
  ttlCheck: "sample" | "every-key";
}

/** Defaults of {@link KeyInspectorOptions}. */
export const DEFAULT_KEY_INSPECTOR_OPTIONS: KeyInspectorOptions = {
  prefixes: [ALL_DEDUP_KEYS_GLOB],
  exactMaxKeys: 2_000_000,
  scanCount: 1000,
  estimateSamples: 40_000,
  sampleKeysPerHandler: 500,
  refreshMinIntervalMs: 10_000,
  staleAfterMs: 60_000,
  maxCallMicros: 1500,
  maxRedisShare: 0.05,
  maxHandlers: 1000,
  ttlCheck: "every-key",
};

/** The defaults with `opts` over them, each checked: a value out of range is a `RangeError` naming the option. */
export function resolveKeyInspectorOptions(opts: Partial<KeyInspectorOptions> = {}): KeyInspectorOptions {
  const o = { ...DEFAULT_KEY_INSPECTOR_OPTIONS, ...opts };
  const range = (name: keyof KeyInspectorOptions, v: number, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi)
      throw new RangeError(`${name}: expected an integer in ${lo}..${hi}, got ${v}`);
  };
  range("exactMaxKeys", o.exactMaxKeys, 0, 1e9);
  range("scanCount", o.scanCount, 1, 1000);
  range("estimateSamples", o.estimateSamples, 100, 1_000_000);
  range("sampleKeysPerHandler", o.sampleKeysPerHandler, 0, 2000);
  if (o.ttlCheck !== "sample" && o.ttlCheck !== "every-key")
    throw new RangeError(`ttlCheck: expected "sample" or "every-key", got ${String(o.ttlCheck)}`);
  range("refreshMinIntervalMs", o.refreshMinIntervalMs, 0, 3_600_000);
  range("staleAfterMs", o.staleAfterMs, 1000, 86_400_000);
  range("maxCallMicros", o.maxCallMicros, 200, 4000);
  range("maxHandlers", o.maxHandlers, 1, 100_000);
  if (!(o.maxRedisShare >= 0.01 && o.maxRedisShare <= 1))
    throw new RangeError(`maxRedisShare: expected 0.01..1, got ${o.maxRedisShare}`);
  return o;
}
