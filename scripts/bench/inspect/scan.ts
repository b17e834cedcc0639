/**
 * Step 1 of bench:inspect: the inspector's exact count against a plain `SCAN MATCH … COUNT 1000`
 * loop (the reference), with the slowest commands; then the same keyspace once every key has a TTL.
 */
import type { Redis } from "ioredis";
import { KeyInspector } from "@/server/observe/keys/inspector";
import type { Inspection as KeyInspection } from "@/server/observe/keys/inspector";
import { fakeUlid } from "@/server/testing/seed-keys";
import { median } from "../../lib/stats";
import { fmt, type InspectFigures } from "./figures";

type ObserveClient = ConstructorParameters<typeof KeyInspector>[0];
type SlowlogEntry = [number, number, number, string[], string, string];

/** ms of a plain `SCAN MATCH *:dedup:* COUNT 1000` loop over the whole keyspace (the reference). */
export async function timePlainScan(admin: Redis): Promise<number> {
  const t = performance.now();
  let cursor = "0";
  do {
    const [next] = await admin.scan(cursor, "MATCH", "*:dedup:*", "COUNT", 1000);
    cursor = next;
  } while (cursor !== "0");
  return performance.now() - t;
}

/** The plain SCAN loop once, counting what it matched; resets the SLOWLOG after reading it. */
async function plainScan(admin: Redis, dbsize: number) {
  const t = performance.now();
  let cursor = "0";
  let plainMatched = 0;
  do {
    const [next, keys] = await admin.scan(cursor, "MATCH", "*:dedup:*", "COUNT", 1000);
    plainMatched += keys.length;
    cursor = next;
  } while (cursor !== "0");
  const plainMs = performance.now() - t;
  const plainRate = dbsize / (plainMs / 1000);
  const slowPlain = ((await admin.slowlog("GET", 128)) as unknown[]).length;
  await admin.slowlog("RESET");
  return { plainMs, plainRate, plainMatched, slowPlain };
}

/** An inspector unpaced, so the figure is the scan's own speed. */
function unpacedInspector(client: ObserveClient, ttlCheck?: "sample"): KeyInspector {
  // The scan's own speed: unpaced (the app's scan waits between calls to stay under 5 % of Redis time, maxRedisShare).
  return new KeyInspector(client, {
    exactMaxKeys: 100_000_000,
    refreshMinIntervalMs: 0,
    ...(ttlCheck ? { ttlCheck } : {}),
    maxRedisShare: 1,
  });
}

/** One timed exact run after a warming estimate (so the timed run is the scan alone). */
async function timedExact(inspector: KeyInspector): Promise<{ run: KeyInspection; ms: number }> {
  await inspector.run("estimate");
  const t = performance.now();
  const run = await inspector.run("exact");
  return { run, ms: performance.now() - t };
}

const noTtlSum = (r: KeyInspection) => r.handlers.reduce((a, h) => a + h.noTtlCount, 0);

/**
 * Step 1: the exact count (default, and counting only) vs the plain loop. Returns the default
 * inspector and its exact run, which steps 1b and 2 reuse.
 */
export async function exactVsPlainScan(admin: Redis, client: ObserveClient, dbsize: number, f: InspectFigures) {
  const { plainMs, plainRate, plainMatched, slowPlain } = await plainScan(admin, dbsize);
  const inspector = unpacedInspector(client);
  const { run: exact, ms: exactMs } = await timedExact(inspector);
  const exactRate = dbsize / (exactMs / 1000);
  const exactSum = exact.handlers.reduce((a, h) => a + h.keyCount, 0);
  // The same scan counting only (ttlCheck "sample": no-TTL counts scaled from a sample).
  const { run: exactTtl, ms: exactTtlMs } = await timedExact(unpacedInspector(client, "sample"));
  const slowInspector = ((await admin.slowlog("GET", 128)) as SlowlogEntry[]).filter(
    (e) => e[5] === "dedup-health-observe",
  );
  f.results["inspect.scan_keys_per_sec"] = Math.round(exactRate);
  f.results["inspect.scan_vs_plain_scan"] = +(exactRate / plainRate).toFixed(3);
  f.details.plainScan = {
    ms: Math.round(plainMs),
    keysPerSec: Math.round(plainRate),
    matched: plainMatched,
    slowlogOver5ms: slowPlain,
  };
  f.details.exactCount = {
    ms: Math.round(exactMs),
    keysPerSec: Math.round(exactRate),
    matched: exactSum,
    noTtl: noTtlSum(exact),
    calls: exact.calls,
    maxCallMicros: exact.maxCallMicros,
    ratioToPlainScan: +(exactRate / plainRate).toFixed(2),
    refundNoTtl: exact.handlers.find((h) => h.prefix === "billing:dedup:refund")?.noTtlCount,
  };
  f.details.inspectorSlowlog = {
    over5ms: slowInspector.length,
    entries: slowInspector.map((e) => ({ micros: e[2], command: e[3].slice(0, 4).join(" ") })),
  };
  f.details.exactCountOnlySampledTtl = {
    ms: Math.round(exactTtlMs),
    keysPerSec: Math.round(dbsize / (exactTtlMs / 1000)),
    ratioToPlainScan: +(dbsize / (exactTtlMs / 1000) / plainRate).toFixed(3),
    noTtl: noTtlSum(exactTtl),
    calls: exactTtl.calls,
    maxCallMicros: exactTtl.maxCallMicros,
  };
  console.log(
    `\n1. exact count (default ttlCheck every-key: a PTTL of every key, exact no-TTL counts): ${fmt(exactRate)} keys/s (${fmt(exactMs)} ms, ${exact.calls} calls, slowest ${exact.maxCallMicros} µs)`,
  );
  console.log(
    `   counting only (ttlCheck sample, SCAN from the client): ${fmt(dbsize / (exactTtlMs / 1000))} keys/s (${fmt(exactTtlMs)} ms, ${exactTtl.calls} SCANs, slowest ${exactTtl.maxCallMicros} µs, no-TTL ${fmt(noTtlSum(exactTtl))} sampled vs ${fmt(noTtlSum(exact))} exact)`,
  );
  console.log(
    `   SLOWLOG entries > 5 ms from both inspector runs: ${slowInspector.length}${slowInspector.map((e) => ` [${e[2]} µs ${e[3].slice(0, 4).join(" ")}]`).join("")}`,
  );
  console.log(
    `   plain SCAN MATCH COUNT 1000 loop: ${fmt(plainRate)} keys/s (${fmt(plainMs)} ms; it only lists keys: no TTL, no grouping)`,
  );
  console.log(
    `   ratio inspector / plain SCAN: ${(exactRate / plainRate).toFixed(2)} (counting only: ${(dbsize / (exactTtlMs / 1000) / plainRate).toFixed(2)}); matched ${fmt(exactSum)} = plain ${fmt(plainMatched)}`,
  );
  return { inspector, exact };
}

/**
 * Step 1b: the same keyspace once every key has a TTL (INFO keyspace: keys == expires, so the exact
 * count reads no per-key TTL: nothing without a TTL can be found; it SCANs from the client and
 * groups in Node). Three interleaved rounds, each exact count between two plain loops; the median
 * ratio (a shared machine's load moves both).
 */
export async function everyKeyHasTtl(admin: Redis, inspector: KeyInspector, ttlMs: number, f: InspectFigures) {
  // The seeded TTL-less group (offset 5,000,000, 10k keys), named as seedKeys wrote them.
  const noTtlKeys = Array.from({ length: 10_000 }, (_, j) => `billing:dedup:refund:${fakeUlid(5_000_000 + j)}`);
  const px = admin.pipeline();
  for (const k of noTtlKeys) px.pexpire(k, ttlMs);
  await px.exec();
  const infoKs = (await admin.info("keyspace")).trim().split("\n").pop() ?? "";
  const allTtl: Array<{ plainMs: number; exactMs: number; ratio: number }> = [];
  for (let round = 0; round < 3; round++) {
    const p1 = await timePlainScan(admin);
    const t = performance.now();
    await inspector.run("exact");
    const e = performance.now() - t;
    const p2 = await timePlainScan(admin);
    allTtl.push({ plainMs: Math.round((p1 + p2) / 2), exactMs: Math.round(e), ratio: +((p1 + p2) / 2 / e).toFixed(3) });
  }
  const allTtlRatio = median(allTtl.map((x) => x.ratio));
  f.results["inspect.scan_vs_plain_scan_every_key_has_ttl"] = allTtlRatio;
  f.details.everyKeyHasTtl = { keyspace: infoKs, ttlGivenTo: noTtlKeys.length, rounds: allTtl };
  console.log(
    `   the same keyspace with a TTL on its ${fmt(noTtlKeys.length)} TTL-less keys (${infoKs}: no per-key TTL read): ratio inspector / plain SCAN ${allTtl.map((x) => x.ratio.toFixed(2)).join(", ")} (median ${allTtlRatio.toFixed(2)})`,
  );
}
