/**
 * `npm run bench:memory` — Redis memory per dedup key for each marking protocol, and the capacity
 * projection's bytes/key estimate against it.
 *
 *   npm run bench:memory -- [--keys 500000] [--batch 1000] [--service billing] [--handler charge] [--topic demo.events] [--json out.json]
 *
 * On a private `redis-server` (random port, no persistence, stopped by pid — the shared Redis'
 * `used_memory` is not touched), for each variant — the markings lease, release, naive, and
 * `lease+position`: lease with Kafka-like positions (`--topic`, 6 partitions, 7-digit offsets), whose
 * keys end in `done:<topic>:<partition>:<offset>` (issue 13: the duplicate cause) instead of `done`:
 * 1. `FLUSHALL` (own server), read `INFO memory` `used_memory`;
 * 2. deliver `--keys` messages (ULID ids) through the real path — `Router.deliverBatch` → the
 *    Deduplicator middleware on a `RedisRepository` (TTL 24 h, the spec's default window) → a no-op
 *    handler — in batches of `--batch`. Lease keys end in `done#<payload fingerprint>`
 *    (`done:<topic>:<partition>:<offset>#<fingerprint>` with positions; their state after completion,
 *    checked); release keys hold `claimed:<token>`; naive keys hold `1`;
 * 3. read `used_memory` again: delta / keys = the measured bytes per key;
 * 4. run the dashboard's `KeyInspector` (what `/api/keys` and `/api/capacity` use) on the same
 *    server: its `bytesPerKey` (mean `MEMORY USAGE … SAMPLES 0` over its key sample plus the dict
 *    overhead `MEMORY USAGE` leaves out, from `MEMORY STATS`) is what the capacity projection
 *    multiplies projected keys by. Error = estimate / measured − 1. The line below it shows that
 *    overhead and what `MEMORY USAGE` alone would have given.
 * Targets (issue 9): |projection error| ≤ 10%; lease bytes/key ≤ 1.3 × naive bytes/key.
 */
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { Deduplicator, type Marking, type Message, MemoryPubSub, RedisRepository, Router } from "@/server/dedup";
import { KeyInspector } from "@/server/observe/keys/inspector";
import { startOwnRedis } from "@/server/testing/own-redis";
import { monotonicFactory } from "ulid";
import { arg } from "../lib/args";
import { emitFigures, runMain } from "../lib/run";

const KEYS = Number(arg("keys", "500000"));
const BATCH = Number(arg("batch", "1000"));
const SERVICE = arg("service", "billing");
const HANDLER = arg("handler", "charge");
const JSON_PATH = arg("json", "");
const TOPIC = arg("topic", "demo.events");
if (!Number.isInteger(KEYS) || KEYS < 1000 || KEYS > 5_000_000)
  throw new RangeError("bench-memory: --keys must be an integer in [1000, 5000000]");
if (!Number.isInteger(BATCH) || BATCH < 1 || BATCH > 10_000)
  throw new RangeError("bench-memory: --batch must be an integer in [1, 10000]");
if (!/^[^\s:]+$/.test(SERVICE) || !/^[^\s:]+$/.test(HANDLER))
  throw new RangeError("bench-memory: --service and --handler must be non-empty without spaces or ':'");

/** One measured setup: a marking, with or without delivery positions in the messages. */
interface Variant {
  name: string;
  marking: Marking;
  position: boolean;
}
const VARIANTS: Variant[] = [
  { name: "lease", marking: "lease", position: false },
  { name: "lease+position", marking: "lease", position: true },
  { name: "release", marking: "release", position: false },
  { name: "naive", marking: "naive", position: false },
];
const PARTITIONS = 6;
/** First offset of each partition: 7 digits, a long-running topic's order of magnitude. */
const OFFSET_BASE = 1_000_000;
const TTL_MS = 24 * 3600_000;

interface MarkingResult {
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

async function main(): Promise<void> {
  console.log(
    `bench:memory  keys=${KEYS} batch=${BATCH} key = ${SERVICE}:dedup:${HANDLER}:<ULID>  ttl=24h  node ${process.version}  ${new Date().toISOString()}`,
  );
  const srv = await startOwnRedis();
  const client = new Redis(srv.url, { maxRetriesPerRequest: 1 });
  const results: MarkingResult[] = [];
  try {
    const version = /redis_version:(\S+)/.exec(await client.info("server"))?.[1] ?? "?";
    const allocator = /mem_allocator:(\S+)/.exec(await client.info("memory"))?.[1] ?? "?";
    console.log(`  own redis-server ${version} (${allocator}) on port ${srv.port}, pid ${srv.pid}`);
    for (const { name: marking, marking: protocol, position } of VARIANTS) {
      await client.flushall(); // our own server only
      await new Promise((r) => setTimeout(r, 200));
      const usedBefore = await usedMemory(client);
      const t0 = performance.now();
      await claimAll(client, protocol, KEYS, position);
      const seconds = (performance.now() - t0) / 1000;
      const usedAfter = await usedMemory(client);
      const dbsize = await client.dbsize();
      if (dbsize !== KEYS) throw new Error(`${marking}: ${dbsize} keys in Redis, expected ${KEYS}`);
      const inspector = new KeyInspector(client, { prefixes: ["*:dedup:*"], maxRedisShare: 1 }); // a count, not a pace
      const insp = await inspector.run("exact");
      const h = insp.handlers.find((x) => x.prefix === `${SERVICE}:dedup:${HANDLER}`);
      if (!h) throw new Error(`${marking}: the inspector found no handler ${SERVICE}:dedup:${HANDLER}`);
      if (h.keyCount !== KEYS)
        throw new Error(`${marking}: the inspector counted ${h.keyCount} keys, expected ${KEYS}`);
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
      results.push(r);
      console.log(
        `  ${marking.padEnd(8)} used_memory +${((usedAfter - usedBefore) / 2 ** 20).toFixed(1)} MiB → ${measured.toFixed(1)} B/key measured;` +
          `  inspector estimate ${est ?? "n/a"} B/key (${h.sampleSize} keys sampled, states ${JSON.stringify(h.states)})` +
          `  error ${r.projectionError === null ? "n/a" : `${(100 * r.projectionError).toFixed(1)}%`}  (${seconds.toFixed(1)} s)`,
      );
      console.log(
        `           of which not in MEMORY USAGE: expires dict ${(over.expires / KEYS).toFixed(1)} B/key + main dict buckets ${(over.mainBuckets / KEYS).toFixed(1)} B/key;` +
          ` MEMORY USAGE alone ${usageOnly?.toFixed(1) ?? "n/a"} B/key, error ${r.memoryUsageOnlyError === null ? "n/a" : `${(100 * r.memoryUsageOnlyError).toFixed(1)}%`}`,
      );
    }
    await client.flushall();
  } finally {
    client.disconnect();
    await srv.stop();
  }

  const by = (m: string) => results.find((r) => r.marking === m)!;
  const leaseVsNaive = by("lease").measuredBytesPerKey / by("naive").measuredBytesPerKey;
  const positionCost = by("lease+position").measuredBytesPerKey - by("lease").measuredBytesPerKey;
  const positionVsNaive = by("lease+position").measuredBytesPerKey / by("naive").measuredBytesPerKey;
  const err = by("lease").projectionError;
  const worst = Math.max(...results.map((r) => Math.abs(r.projectionError ?? Infinity)));
  console.log(
    `\ntargets: projection error (lease, done keys) ${err === null ? "n/a" : `${(100 * err).toFixed(1)}%`} (|·| ≤ 10%: ${err !== null && Math.abs(err) <= 0.1 ? "met" : "MISSED"}; worst marking ${(100 * worst).toFixed(1)}%);` +
      `  lease/naive bytes per key ${leaseVsNaive.toFixed(3)} (≤ 1.3: ${leaseVsNaive <= 1.3 ? "met" : "MISSED"})`,
  );
  console.log(
    `position in the done value (issue 13): lease ${by("lease").measuredBytesPerKey.toFixed(1)} → lease+position ${by("lease+position").measuredBytesPerKey.toFixed(1)} B/key` +
      ` (+${positionCost.toFixed(1)} B/key, ×${(by("lease+position").measuredBytesPerKey / by("lease").measuredBytesPerKey).toFixed(3)}; ×${positionVsNaive.toFixed(3)} naive)`,
  );
  const out = [
    {
      name: "redis.bytes_per_key_projection_error",
      value: err === null ? null : +err.toFixed(4),
      unit: "fraction",
      reference: +by("lease").measuredBytesPerKey.toFixed(1),
      ratio:
        by("lease").estimateBytesPerKey === null
          ? null
          : +(by("lease").estimateBytesPerKey! / by("lease").measuredBytesPerKey).toFixed(4),
      target: 0.1,
      detail: {
        worstMarking: +worst.toFixed(4),
        memoryUsageOnlyError:
          by("lease").memoryUsageOnlyError === null ? null : +by("lease").memoryUsageOnlyError!.toFixed(4),
      },
    },
    {
      name: "redis.lease_vs_naive_bytes_per_key",
      value: +leaseVsNaive.toFixed(4),
      unit: "ratio",
      reference: +by("naive").measuredBytesPerKey.toFixed(1),
      ratio: +leaseVsNaive.toFixed(4),
      target: 1.3,
    },
    {
      name: "redis.done_position_cost_bytes_per_key",
      value: +positionCost.toFixed(1),
      unit: "B/key",
      reference: +by("lease").measuredBytesPerKey.toFixed(1),
      ratio: +(by("lease+position").measuredBytesPerKey / by("lease").measuredBytesPerKey).toFixed(4),
      detail: {
        topic: TOPIC,
        partitions: PARTITIONS,
        offsetDigits: String(OFFSET_BASE).length,
        positionVsNaive: +positionVsNaive.toFixed(4),
      },
    },
    ...results.map((r) => ({
      name: `redis.bytes_per_key.${r.marking}`,
      value: +r.measuredBytesPerKey.toFixed(1),
      unit: "B/key",
      reference: r.estimateBytesPerKey,
      ratio: r.estimateBytesPerKey === null ? null : +(r.estimateBytesPerKey / r.measuredBytesPerKey).toFixed(4),
      detail: {
        keys: r.keys,
        key: `${SERVICE}:dedup:${HANDLER}:<ULID>`,
        memoryUsageOnlyBytesPerKey:
          r.memoryUsageOnlyBytesPerKey === null ? null : +r.memoryUsageOnlyBytesPerKey.toFixed(1),
        states: r.states,
      },
    })),
  ];
  emitFigures(out, JSON_PATH);
}

runMain(main);
