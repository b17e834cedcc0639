import type { Redis } from "ioredis";
import { countUpstream } from "../core/upstream-counter";

/**
 * What one key costs its database beyond its own `MEMORY USAGE` (which counts the key string, the
 * value and the main-dict entry): its share of the main dict's bucket array, and — when it has a
 * TTL — its entry in the `expires` dict with that dict's share of buckets. Without it, bytes/key
 * (and the capacity projection) came out ≈ 30% low for dedup keys (`npm run bench:memory`).
 */
export interface DictOverhead {
  /** Bytes per key of every key (main-dict buckets). */
  perKey: number;
  /** Extra bytes per key that has a TTL (expires-dict entry and buckets). */
  perKeyWithTtl: number;
}

/**
 * {@link DictOverhead} of database `db` from a `MEMORY STATS` reply and the database's key and
 * expire counts (`INFO keyspace`). Main-dict buckets are 8 B × slots, slots being the next power of
 * two ≥ keys (a rehash in progress briefly holds two tables: then this is low). `null` when the
 * reply has no `db.<db>` entry with `overhead.hashtable.expires` (other servers or versions).
 */
export function dictOverhead(memoryStats: unknown, db: number, keys: number, expires: number): DictOverhead | null {
  if (!Array.isArray(memoryStats) || keys <= 0) return null;
  const i = memoryStats.indexOf(`db.${db}`);
  const entry = i >= 0 ? memoryStats[i + 1] : undefined;
  if (!Array.isArray(entry)) return null;
  const j = entry.indexOf("overhead.hashtable.expires");
  const expiresBytes = j >= 0 ? Number(entry[j + 1]) : NaN;
  if (!Number.isFinite(expiresBytes)) return null;
  return {
    perKey: (8 * 2 ** Math.ceil(Math.log2(keys))) / keys,
    perKeyWithTtl: expires > 0 ? expiresBytes / expires : 0,
  };
}

/** `keys` and `expires` of database `db` from an `INFO keyspace` reply (zeros when absent). */
export function keyspaceCounts(info: string, db: number): { keys: number; expires: number } {
  const m = new RegExp(`^db${db}:keys=(\\d+),expires=(\\d+)`, "m").exec(info);
  return m ? { keys: Number(m[1]), expires: Number(m[2]) } : { keys: 0, expires: 0 };
}

/** {@link DictOverhead} of a master, read with one pipeline (`MEMORY STATS`, `INFO keyspace`); `null` when unavailable. */
export async function readDictOverhead(node: Redis): Promise<DictOverhead | null> {
  try {
    const res =
      (await countUpstream("redis", () => node.pipeline().call("MEMORY", "STATS").info("keyspace").exec())) ?? [];
    const [statsErr, stats] = res[0] ?? [];
    const [infoErr, info] = res[1] ?? [];
    if (statsErr || infoErr) return null;
    const db = node.options.db ?? 0;
    const { keys, expires } = keyspaceCounts(String(info ?? ""), db);
    return dictOverhead(stats, db, keys, expires);
  } catch {
    return null;
  }
}
