/** One setup measured: keys claimed through the library, used_memory before and after, the inspector's estimate. */
import type { Redis } from "ioredis";
import { Registry } from "prom-client";
import { Deduplicator, type Marking, type Message, MemoryPubSub, RedisRepository, Router } from "@/server/dedup";
import { KeyInspector } from "@/server/observe/keys/inspector";
import { monotonicFactory } from "ulid";
import { BATCH, HANDLER, KEYS, OFFSET_BASE, PARTITIONS, SERVICE, TOPIC, TTL_MS, type Variant } from "./settings";

/** What one setup measured. */
export interface MarkingResult {
  marking: string;
  keys: number;
  usedBefore: number;
  usedAfter: number;
  measuredBytesPerKey: number;
  estimateBytesPerKey: number | null;
  sampleSize: number;
  states: Record<string, number>;
  projectionError: number | null;
  /** `estimateBytesPerKey` − {@link uncountedOverheadPerKey}: what `MEMORY USAGE` alone gives. */
  memoryUsageOnlyBytesPerKey: number | null;
  memoryUsageOnlyError: number | null;
  seconds: number;
}

/**
 * The per-key memory that `MEMORY USAGE` leaves out (reported for the explanation; the inspector
 * adds the same overhead, server/observe/keys/samples.ts), from `MEMORY STATS` of db 0: the expires
 * dict (one entry per key with a TTL, plus its bucket array) and the main dict's bucket array
 * (8 B per slot; slots = the next power of two ≥ keys). Per key, averaged over the database.
 */
async function uncountedOverheadPerKey(r: Redis): Promise<{ perKey: number; expires: number; mainBuckets: number }> {
  const stats = (await r.call("MEMORY", "STATS")) as unknown[];
  const i = stats.indexOf("db.0");
  const db = (i >= 0 ? stats[i + 1] : []) as unknown[];
  const field = (name: string) => Number(db[db.indexOf(name) + 1] ?? 0);
  const keys = await r.dbsize();
  const expires = field("overhead.hashtable.expires");
  const mainBuckets = 8 * 2 ** Math.ceil(Math.log2(Math.max(1, keys)));
  return { perKey: keys ? (expires + mainBuckets) / keys : 0, expires, mainBuckets };
}

/** INFO memory's used_memory, in bytes. */
async function usedMemory(r: Redis): Promise<number> {
  const info = await r.info("memory");
  const m = /^used_memory:(\d+)/m.exec(info);
  if (!m) throw new Error("INFO memory has no used_memory");
  return Number(m[1]);
}

/** Delivers `n` fresh messages through Router → Deduplicator(marking) → no-op, in batches (with Kafka-like positions when `position`). */
async function claimAll(client: Redis, marking: Marking, n: number, position: boolean): Promise<void> {
  const router = new Router({ onError: (e) => console.error(`[bench-memory] ${e.error.message}`) });
  const dedup = new Deduplicator({
    repository: new RedisRepository(client),
    service: SERVICE,
    marking,
    ttlMs: TTL_MS,
    registry: new Registry(),
  });
  router.addHandler({
    name: HANDLER,
    topic: "bench-memory",
    subscriber: new MemoryPubSub(),
    handler: async () => undefined,
    middleware: [dedup.middleware],
  });
  const sink = router.sink(HANDLER);
  const id = monotonicFactory();
  const never = new AbortController().signal;
  const payload = Buffer.alloc(0);
  for (let i = 0; i < n; i += BATCH) {
    const msgs: Message[] = Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => {
      const k = i + j;
      const context = position
        ? { topic: TOPIC, partition: k % PARTITIONS, offset: String(OFFSET_BASE + Math.floor(k / PARTITIONS)) }
        : {};
      return { uuid: id(), metadata: {}, payload, signal: never, context };
    });
    const out = await sink.deliverBatch(msgs);
    if (out.length !== msgs.length || out.some((o) => o !== "ack"))
      throw new Error(`${marking}: a batch was not acked entirely`);
  }
}

/**
 * The inspector's view of the handler after the claims: every key counted, and for the lease
 * marking every sampled key done, its value carrying the position when the messages had one.
 */
async function inspected(client: Redis, v: Variant) {
  const { name: marking, marking: protocol, position } = v;
  const inspector = new KeyInspector(client, { prefixes: ["*:dedup:*"], maxRedisShare: 1 }); // a count, not a pace
  const insp = await inspector.run("exact");
  const h = insp.handlers.find((x) => x.prefix === `${SERVICE}:dedup:${HANDLER}`);
  if (!h) throw new Error(`${marking}: the inspector found no handler ${SERVICE}:dedup:${HANDLER}`);
  if (h.keyCount !== KEYS) throw new Error(`${marking}: the inspector counted ${h.keyCount} keys, expected ${KEYS}`);
  if (protocol === "lease" && h.states.done !== h.sampleSize)
    throw new Error(`${marking}: ${h.sampleSize - h.states.done} sampled keys not in state done`);
  if (protocol === "lease") {
    // `done[:<topic>:<partition>:<offset>]#<payload fingerprint>`
    const sample = (await client.get((await client.scan("0", "COUNT", 10))[1][0]!)) ?? "";
    if (!sample.startsWith(position ? `done:${TOPIC}:` : "done#"))
      throw new Error(
        `${marking}: a key holds ${sample}, expected done${position ? `:${TOPIC}:<partition>:<offset>` : ""}#<fingerprint>`,
      );
    console.log(`  ${marking}: a key's value is ${JSON.stringify(sample)} (${sample.length} B)`);
  }
  return h;
}

/** Claims KEYS keys of setup `v` on an emptied server and compares used_memory with the estimate. */
export async function measureVariant(client: Redis, v: Variant): Promise<MarkingResult> {
  const { name: marking, marking: protocol, position } = v;
  await client.flushall(); // our own server only
  await new Promise((r) => setTimeout(r, 200));
  const usedBefore = await usedMemory(client);
  const t0 = performance.now();
  await claimAll(client, protocol, KEYS, position);
  const seconds = (performance.now() - t0) / 1000;
  const usedAfter = await usedMemory(client);
  const dbsize = await client.dbsize();
  if (dbsize !== KEYS) throw new Error(`${marking}: ${dbsize} keys in Redis, expected ${KEYS}`);
  const h = await inspected(client, v);
  const measured = (usedAfter - usedBefore) / KEYS;
  const est = h.bytesPerKey;
  const over = await uncountedOverheadPerKey(client);
  const usageOnly = est === null ? null : est - over.perKey;
  const r: MarkingResult = {
    marking,
    keys: KEYS,
    usedBefore,
    usedAfter,
    measuredBytesPerKey: measured,
    estimateBytesPerKey: est,
    sampleSize: h.sampleSize,
    states: h.states,
    projectionError: est === null ? null : est / measured - 1,
    memoryUsageOnlyBytesPerKey: usageOnly,
    memoryUsageOnlyError: usageOnly === null ? null : usageOnly / measured - 1,
    seconds,
  };
  console.log(
    `  ${marking.padEnd(8)} used_memory +${((usedAfter - usedBefore) / 2 ** 20).toFixed(1)} MiB → ${measured.toFixed(1)} B/key measured;` +
      `  inspector estimate ${est ?? "n/a"} B/key (${h.sampleSize} keys sampled, states ${JSON.stringify(h.states)})` +
      `  error ${r.projectionError === null ? "n/a" : `${(100 * r.projectionError).toFixed(1)}%`}  (${seconds.toFixed(1)} s)`,
  );
  console.log(
    `           of which not in MEMORY USAGE: expires dict ${(over.expires / KEYS).toFixed(1)} B/key + main dict buckets ${(over.mainBuckets / KEYS).toFixed(1)} B/key;` +
      ` MEMORY USAGE alone ${usageOnly?.toFixed(1) ?? "n/a"} B/key, error ${r.memoryUsageOnlyError === null ? "n/a" : `${(100 * r.memoryUsageOnlyError).toFixed(1)}%`}`,
  );
  return r;
}
