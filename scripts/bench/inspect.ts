/**
 * `npm run bench:inspect [-- --keys 1000000] [--json out.json] [--url http://127.0.0.1:3000]`
 *
 * In one run, on a private redis-server (random port, stopped by pid) and a private Prometheus:
 * 1. keys/s of the inspector's exact count vs a plain `SCAN MATCH … COUNT 1000` loop, and the
 *    slowest inspector command (server-side) plus SLOWLOG entries above 5 ms;
 * 2. latency and error of the sampled estimate at the seeded size (default 1M keys);
 * 3. `/api/overview` p50/p95 with 50 concurrent viewers (the route's GET called in-process, or
 *    HTTP against `--url`), and the upstream calls (Prometheus, Redis) it caused vs 1 viewer.
 * Targets (issues 5, 15): ≥ 400k keys/s, `inspect.scan_vs_plain_scan` (exact count ÷ the plain SCAN
 * loop, same run) ≥ 0.85, with no command > 5 ms; `inspect.estimate_ms_1m_keys` (±3% kept) ≤ 150 ms;
 * p95 ≤ 100 ms with upstream queries independent of the number of viewers.
 * The exact count is the default one: it PTTLs every key on a master that has keys without TTL
 * (exact no-TTL counts); the same scan counting only (`ttlCheck: "sample"`) is reported beside it.
 * Two keyspaces, two rows: `inspect.scan_vs_plain_scan` is the seeded one, WITH 10k keys without
 * TTL (INFO keyspace keys > expires: the exact count PTTLs every key); then those keys get a TTL and
 * `inspect.scan_vs_plain_scan_every_key_has_ttl` is the same keyspace WITHOUT TTL-less keys (keys ==
 * expires: no per-key TTL read, the keys counted by SCAN from the client), median of three
 * interleaved rounds.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { createObserveRedis } from "@/server/observe/redis/client";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { seedKeys, type SeedGroup } from "@/server/testing/seed-keys";
import { optArg } from "../lib/args";
import { runMain } from "../lib/run";
import { estimateLatency } from "./inspect/estimate";
import { fmt, type InspectFigures } from "./inspect/figures";
import { overviewUnderViewers, stopOverviewRig, type OverviewRig } from "./inspect/overview";
import { everyKeyHasTtl, exactVsPlainScan } from "./inspect/scan";

const TOTAL = Number(optArg("keys") ?? 1_000_000);
const JSON_OUT = optArg("json");
const URL_ARG = optArg("url");
const LOAD_MS = Number(optArg("load-ms") ?? 8000);
const H = 3_600_000;

/** Seeds TOTAL keys: 5 handlers of 2 services (one with 10k keys without TTL) and 10% unrelated keys. */
async function seed(admin: Redis): Promise<number> {
  const perHandler = Math.floor((TOTAL * 0.9) / 5);
  const groups: SeedGroup[] = [
    { prefix: "notification:dedup:on-review-created", count: perHandler, ttlMs: 24 * H },
    { prefix: "notification:dedup:on-user-banned", count: perHandler, ttlMs: 7 * 24 * H },
    { prefix: "notification:dedup:on-page-viewed", count: perHandler, ttlMs: H, value: "1" },
    { prefix: "billing:dedup:charge", count: perHandler, ttlMs: 24 * H },
    { prefix: "billing:dedup:refund", count: perHandler - 10_000, ttlMs: 24 * H },
    { prefix: "billing:dedup:refund", count: 10_000, ttlMs: null, offset: 5_000_000 },
    { prefix: "cache:user", count: TOTAL - 5 * perHandler, ttlMs: H },
  ];
  const t = performance.now();
  await seedKeys(admin, groups);
  const dbsize = await admin.dbsize();
  console.log(
    `seeded ${fmt(dbsize)} keys in ${fmt(performance.now() - t)} ms (5 handlers × ${fmt(perHandler)}, 10k without TTL, the rest unrelated)`,
  );
  await admin.slowlog("RESET");
  return dbsize;
}

async function main() {
  // Figures on a shared 2-core machine swing with its load: record it next to them.
  const f: InspectFigures = { results: {}, details: { loadAverageAtStart: loadavg().map((x) => +x.toFixed(2)) } };
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} on ${cpus().length} cores`,
  );
  let redisSrv: OwnRedis | undefined;
  const rig: OverviewRig = {};
  try {
    redisSrv = await startOwnRedis({ realtime: true });
    console.log(`redis-server pid ${redisSrv.pid} on port ${redisSrv.port} (SCHED_FIFO when allowed, slowlog > 5 ms)`);
    const admin = new Redis(redisSrv.url);
    const dbsize = await seed(admin);
    const client = createObserveRedis({ url: redisSrv.url });
    const { inspector, exact } = await exactVsPlainScan(admin, client, dbsize, f);
    await everyKeyHasTtl(admin, inspector, 24 * H, f);
    await estimateLatency(inspector, exact, dbsize, f);
    await overviewUnderViewers(client, URL_ARG, LOAD_MS, rig, f);
    client.disconnect();
    admin.disconnect();
  } finally {
    await stopOverviewRig(rig);
    await redisSrv?.stop();
  }
  console.log(`\n${JSON.stringify(f.results)}`);
  if (JSON_OUT) writeFileSync(JSON_OUT, `${JSON.stringify({ ...f.results, details: f.details }, null, 2)}\n`);
}

runMain(main);
