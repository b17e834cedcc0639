import type { Redis } from "ioredis";
import type { KeyState } from "@/lib/api-types";
import { TTL_BUCKETS, type Accum } from "./key-accum";
import { countUpstream } from "./upstream-counter";

/** Per-handler sample reads: value state, MEMORY USAGE and PTTL. */
export interface SampleStats {
  states: Record<KeyState, number>;
  bytesPerKey: number | null;
  ttlP50: number | null;
  /** Sampled keys per TTL bucket, keys without TTL, and min/max TTL in the sample. */
  buckets: number[];
  noTtl: number;
  minTtl: number;
  maxTtl: number;
  size: number;
}

/**
 * State of a dedup key from its value: the lease marking stores `processing:<token>` then `done`;
 * the release marking stores `claimed:<token>`; the naive marking (and Watermill-style
 * repositories) store `1`.
 */
export function classifyValue(v: string): KeyState {
  if (v.startsWith("processing:") || v === "processing") return "processing";
  if (v === "done") return "done";
  if (v === "1" || v.startsWith("claimed:")) return "marked";
  return "other";
}

/** Reads value, MEMORY USAGE and PTTL of each handler's sample keys (at most `limit`), pipelined per master in batches of 200. */
export async function readSamples(nodes: Redis[], accums: Map<string, Accum>, limit: number): Promise<Map<string, SampleStats>> {
  const byNode = new Map<number, Array<{ prefix: string; key: string }>>();
  for (const a of accums.values()) {
    for (const s of a.samples.slice(0, limit)) {
      const list = byNode.get(s.node) ?? [];
      list.push({ prefix: a.prefix, key: s.key });
      byNode.set(s.node, list);
    }
  }
  const acc = new Map<string, { states: Record<KeyState, number>; bytes: number[]; ttls: number[]; noTtl: number }>();
  const BATCH = 200;
  for (const [ni, list] of byNode) {
    const node = nodes[ni];
    if (!node) continue;
    for (let i = 0; i < list.length; i += BATCH) {
      const chunk = list.slice(i, i + BATCH);
      const p = node.pipeline();
      for (const { key } of chunk) p.call("MEMORY", "USAGE", key, "SAMPLES", "0").getrange(key, 0, 63).pttl(key);
      const res = (await countUpstream("redis", () => p.exec())) ?? [];
      chunk.forEach(({ prefix, key: _key }, j) => {
        const [memErr, mem] = res[3 * j] ?? [];
        const [valErr, val] = res[3 * j + 1] ?? [];
        const [, ttl] = res[3 * j + 2] ?? [];
        if (ttl === -2) return; // expired meanwhile
        const e = acc.get(prefix) ?? { states: { processing: 0, done: 0, marked: 0, other: 0 }, bytes: [], ttls: [], noTtl: 0 };
        if (ttl === -1) e.noTtl++;
        e.states[valErr ? "other" : classifyValue(String(val ?? ""))]++;
        if (!memErr && typeof mem === "number") e.bytes.push(mem);
        if (typeof ttl === "number" && ttl >= 0) e.ttls.push(ttl);
        acc.set(prefix, e);
      });
    }
  }
  const out = new Map<string, SampleStats>();
  for (const [prefix, e] of acc) {
    const size = e.states.processing + e.states.done + e.states.marked + e.states.other;
    e.ttls.sort((a, b) => a - b);
    out.set(prefix, {
      states: e.states,
      bytesPerKey: e.bytes.length ? Math.round(e.bytes.reduce((a, b) => a + b, 0) / e.bytes.length) : null,
      ttlP50: e.ttls.length ? e.ttls[Math.floor(e.ttls.length / 2)]! : null,
      buckets: TTL_BUCKETS.map((b, i) => e.ttls.filter((t) => t >= (i === 0 ? 0 : (TTL_BUCKETS[i - 1]!.maxMs ?? 0)) && (b.maxMs === null || t < b.maxMs)).length),
      noTtl: e.noTtl,
      minTtl: e.ttls.length ? e.ttls[0]! : -1,
      maxTtl: e.ttls.length ? e.ttls[e.ttls.length - 1]! : -1,
      size,
    });
  }
  return out;
}
