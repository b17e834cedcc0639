import { describe, expect, it } from "vitest";
import { dictOverhead, keyspaceCounts } from "./dict-overhead";

/** The shape of a Redis 7.0 `MEMORY STATS` reply (abridged), as ioredis returns it. */
const STATS = [
  "peak.allocated",
  67889360,
  "total.allocated",
  95000000,
  "db.0",
  ["overhead.hashtable.main", 24194304, "overhead.hashtable.expires", 16194304],
  "keys.count",
  500000,
];

describe("dictOverhead", () => {
  it("charges every key its share of the main dict's buckets and a key with a TTL its expires entry", () => {
    const o = dictOverhead(STATS, 0, 500_000, 500_000)!;
    // 2^19 = 524,288 slots × 8 B over 500,000 keys; expires 16,194,304 B over 500,000 expiring keys.
    expect(o.perKey).toBeCloseTo((8 * 524_288) / 500_000, 6);
    expect(o.perKeyWithTtl).toBeCloseTo(16_194_304 / 500_000, 6);
  });

  it("is null when the server does not report the database (other server or version): no correction rather than a wrong one", () => {
    expect(dictOverhead(STATS, 3, 10, 10)).toBeNull();
    expect(dictOverhead(["db.0", ["overhead.hashtable.main", 1]], 0, 10, 10)).toBeNull();
    expect(dictOverhead("ERR unknown command", 0, 10, 10)).toBeNull();
    expect(dictOverhead(STATS, 0, 0, 0)).toBeNull();
  });

  it("adds nothing for expiring keys when no key expires", () => {
    expect(dictOverhead(STATS, 0, 1000, 0)!.perKeyWithTtl).toBe(0);
  });
});

describe("keyspaceCounts", () => {
  it("reads keys and expires of the requested database only", () => {
    const info = "# Keyspace\r\ndb0:keys=120,expires=100,avg_ttl=5000\r\ndb2:keys=7,expires=0,avg_ttl=0\r\n";
    expect(keyspaceCounts(info, 0)).toEqual({ keys: 120, expires: 100 });
    expect(keyspaceCounts(info, 2)).toEqual({ keys: 7, expires: 0 });
    expect(keyspaceCounts(info, 1)).toEqual({ keys: 0, expires: 0 });
  });
});
