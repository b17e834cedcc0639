import type { Redis } from "ioredis";

/** One seeded group of keys. */
export interface SeedGroup {
  /** Literal prefix; keys are `<prefix>:<id>`. */
  prefix: string;
  count: number;
  /** TTL in ms; `null` = no TTL. */
  ttlMs: number | null;
  /** Value stored; default `done`. */
  value?: string;
  /** First id index (ids are `fakeUlid(offset + i)`); default 0. */
  offset?: number;
}

/**
 * Writes the groups with pipelined `SET … PX` (or plain SET for no TTL), `batch` commands per
 * round trip. Ids are ULID-shaped (26 chars) so values and sizes look like real dedup keys.
 */
export async function seedKeys(r: Redis, groups: readonly SeedGroup[], batch = 10_000): Promise<number> {
  let n = 0;
  for (const g of groups) {
    for (let i = 0; i < g.count; i += batch) {
      const p = r.pipeline();
      const end = Math.min(g.count, i + batch);
      for (let j = i; j < end; j++) {
        const key = `${g.prefix}:${fakeUlid((g.offset ?? 0) + j)}`;
        if (g.ttlMs === null) p.set(key, g.value ?? "done");
        else p.set(key, g.value ?? "done", "PX", g.ttlMs);
      }
      await p.exec();
      n += end - i;
    }
  }
  return n;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A deterministic 26-character ULID-like id for index `i`. */
export function fakeUlid(i: number): string {
  let s = "";
  let x = i;
  for (let k = 0; k < 10; k++) {
    s = CROCKFORD[x % 32] + s;
    x = Math.floor(x / 32);
  }
  return `01JD8X3Q${"0".repeat(8)}${s}`;
}
