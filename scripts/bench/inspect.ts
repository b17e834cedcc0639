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
import { createServer } from "node:http";
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { GET as overviewGET } from "@/app/api/overview/route";
import { dedupRecorder } from "@/server/dedup";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { DEFAULT_KEY_INSPECTOR_OPTIONS, KeyInspector } from "@/server/observe/keys/inspector";
import { PrometheusSource } from "@/server/observe/metrics/prometheus";
import { createObserveRedis } from "@/server/observe/redis-client";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { freePort } from "@/server/testing/net";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { fakeUlid, seedKeys, type SeedGroup } from "@/server/testing/seed-keys";
import { upstreamCalls } from "@/server/observe/upstream-counter";
import { optArg } from "../lib/args";
import { runMain } from "../lib/run";
import { median, percentile } from "../lib/stats";

const TOTAL = Number(optArg("keys") ?? 1_000_000);
const JSON_OUT = optArg("json");
const URL_ARG = optArg("url");
const VIEWERS = 50;
const LOAD_MS = Number(optArg("load-ms") ?? 8000);

const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

async function load(
  viewers: number,
  ms: number,
  get: () => Promise<number>,
): Promise<{ lat: number[]; errors: number }> {
  const lat: number[] = [];
  let errors = 0;
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: viewers }, async () => {
      while (Date.now() < end) {
        const t = performance.now();
        const status = await get().catch(() => 599);
        lat.push(performance.now() - t);
        if (status !== 200) errors++;
        // A dashboard polls; back-to-back requests are the worst case, so no think time.
      }
    }),
  );
  return { lat, errors };
}

/** ms of a plain `SCAN MATCH *:dedup:* COUNT 1000` loop over the whole keyspace (the reference). */
async function timePlainScan(admin: Redis): Promise<number> {
  const t = performance.now();
  let cursor = "0";
  do {
    const [next] = await admin.scan(cursor, "MATCH", "*:dedup:*", "COUNT", 1000);
    cursor = next;
  } while (cursor !== "0");
  return performance.now() - t;
}

async function main() {
  const results: Record<string, number> = {};
  // Figures on a shared 2-core machine swing with its load: record it next to them.
  const details: Record<string, unknown> = { loadAverageAtStart: loadavg().map((x) => +x.toFixed(2)) };
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} on ${cpus().length} cores`,
  );
  let redisSrv: OwnRedis | undefined;
  let prom: OwnPrometheus | undefined;
  let app: ReturnType<typeof createServer> | undefined;
  let driver: ReturnType<typeof setInterval> | undefined;
  try {
    redisSrv = await startOwnRedis({ realtime: true });
    console.log(`redis-server pid ${redisSrv.pid} on port ${redisSrv.port} (SCHED_FIFO when allowed, slowlog > 5 ms)`);
    const admin = new Redis(redisSrv.url);
    const perHandler = Math.floor((TOTAL * 0.9) / 5);
    const H = 3_600_000;
    const groups: SeedGroup[] = [
      { prefix: "notification:dedup:on-review-created", count: perHandler, ttlMs: 24 * H },
      { prefix: "notification:dedup:on-user-banned", count: perHandler, ttlMs: 7 * 24 * H },
      { prefix: "notification:dedup:on-page-viewed", count: perHandler, ttlMs: H, value: "1" },
      { prefix: "billing:dedup:charge", count: perHandler, ttlMs: 24 * H },
      { prefix: "billing:dedup:refund", count: perHandler - 10_000, ttlMs: 24 * H },
      { prefix: "billing:dedup:refund", count: 10_000, ttlMs: null, offset: 5_000_000 },
      { prefix: "cache:user", count: TOTAL - 5 * perHandler, ttlMs: H },
    ];
    let t = performance.now();
    await seedKeys(admin, groups);
    const dbsize = await admin.dbsize();
    console.log(
      `seeded ${fmt(dbsize)} keys in ${fmt(performance.now() - t)} ms (5 handlers × ${fmt(perHandler)}, 10k without TTL, the rest unrelated)`,
    );
    await admin.slowlog("RESET");

    // 1. Plain SCAN loop (the reference) vs the inspector's exact count.
    t = performance.now();
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

    const client = createObserveRedis({ url: redisSrv.url });
    // The scan's own speed: unpaced (the app's scan waits between calls to stay under 5 % of Redis time, maxRedisShare).
    const inspector = new KeyInspector(client, {
      exactMaxKeys: 100_000_000,
      refreshMinIntervalMs: 0,
      maxRedisShare: 1,
    });
    await inspector.run("estimate"); // warm: the timed exact run below is the scan alone
    t = performance.now();
    const exact = await inspector.run("exact");
    const exactMs = performance.now() - t;
    const exactRate = dbsize / (exactMs / 1000);
    const exactSum = exact.handlers.reduce((a, h) => a + h.keyCount, 0);
    // The same scan counting only (ttlCheck "sample": no-TTL counts scaled from a sample).
    const countOnly = new KeyInspector(client, {
      exactMaxKeys: 100_000_000,
      refreshMinIntervalMs: 0,
      ttlCheck: "sample",
      maxRedisShare: 1,
    });
    await countOnly.run("estimate");
    t = performance.now();
    const exactTtl = await countOnly.run("exact");
    const exactTtlMs = performance.now() - t;
    const slowInspector = (
      (await admin.slowlog("GET", 128)) as Array<[number, number, number, string[], string, string]>
    ).filter((e) => e[5] === "dedup-health-observe");
    results["inspect.scan_keys_per_sec"] = Math.round(exactRate);
    results["inspect.scan_vs_plain_scan"] = +(exactRate / plainRate).toFixed(3);
    details.plainScan = {
      ms: Math.round(plainMs),
      keysPerSec: Math.round(plainRate),
      matched: plainMatched,
      slowlogOver5ms: slowPlain,
    };
    details.exactCount = {
      ms: Math.round(exactMs),
      keysPerSec: Math.round(exactRate),
      matched: exactSum,
      noTtl: exact.handlers.reduce((a, h) => a + h.noTtlCount, 0),
      calls: exact.calls,
      maxCallMicros: exact.maxCallMicros,
      ratioToPlainScan: +(exactRate / plainRate).toFixed(2),
      refundNoTtl: exact.handlers.find((h) => h.prefix === "billing:dedup:refund")?.noTtlCount,
    };
    details.inspectorSlowlog = {
      over5ms: slowInspector.length,
      entries: slowInspector.map((e) => ({ micros: e[2], command: e[3].slice(0, 4).join(" ") })),
    };
    details.exactCountOnlySampledTtl = {
      ms: Math.round(exactTtlMs),
      keysPerSec: Math.round(dbsize / (exactTtlMs / 1000)),
      ratioToPlainScan: +(dbsize / (exactTtlMs / 1000) / plainRate).toFixed(3),
      noTtl: exactTtl.handlers.reduce((a, h) => a + h.noTtlCount, 0),
      calls: exactTtl.calls,
      maxCallMicros: exactTtl.maxCallMicros,
    };
    console.log(
      `\n1. exact count (default ttlCheck every-key: a PTTL of every key, exact no-TTL counts): ${fmt(exactRate)} keys/s (${fmt(exactMs)} ms, ${exact.calls} calls, slowest ${exact.maxCallMicros} µs)`,
    );
    console.log(
      `   counting only (ttlCheck sample, SCAN from the client): ${fmt(dbsize / (exactTtlMs / 1000))} keys/s (${fmt(exactTtlMs)} ms, ${exactTtl.calls} SCANs, slowest ${exactTtl.maxCallMicros} µs, no-TTL ${fmt(exactTtl.handlers.reduce((a, h) => a + h.noTtlCount, 0))} sampled vs ${fmt(exact.handlers.reduce((a, h) => a + h.noTtlCount, 0))} exact)`,
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

    // 1b. The same keyspace once every key has a TTL (INFO keyspace: keys == expires, so the exact
    // count reads no per-key TTL: nothing without a TTL can be found; it SCANs from the client and
    // groups in Node). Three interleaved rounds,
    // each exact count between two plain loops; the median ratio (a shared machine's load moves both).
    // The seeded TTL-less group (offset 5,000,000, 10k keys), named as seedKeys wrote them.
    const noTtlKeys = Array.from({ length: 10_000 }, (_, j) => `billing:dedup:refund:${fakeUlid(5_000_000 + j)}`);
    const px = admin.pipeline();
    for (const k of noTtlKeys) px.pexpire(k, 24 * H);
    await px.exec();
    const infoKs = (await admin.info("keyspace")).trim().split("\n").pop() ?? "";
    const allTtl: Array<{ plainMs: number; exactMs: number; ratio: number }> = [];
    for (let round = 0; round < 3; round++) {
      const p1 = await timePlainScan(admin);
      t = performance.now();
      await inspector.run("exact");
      const e = performance.now() - t;
      const p2 = await timePlainScan(admin);
      allTtl.push({
        plainMs: Math.round((p1 + p2) / 2),
        exactMs: Math.round(e),
        ratio: +((p1 + p2) / 2 / e).toFixed(3),
      });
    }
    const allTtlRatio = median(allTtl.map((x) => x.ratio));
    results["inspect.scan_vs_plain_scan_every_key_has_ttl"] = allTtlRatio;
    details.everyKeyHasTtl = { keyspace: infoKs, ttlGivenTo: noTtlKeys.length, rounds: allTtl };
    console.log(
      `   the same keyspace with a TTL on its ${fmt(noTtlKeys.length)} TTL-less keys (${infoKs}: no per-key TTL read): ratio inspector / plain SCAN ${allTtl.map((x) => x.ratio.toFixed(2)).join(", ")} (median ${allTtlRatio.toFixed(2)})`,
    );

    // 2. Estimate latency and error.
    const estRuns: number[] = [];
    let worstRel = 0;
    let worstBoundRel = 0;
    for (let i = 0; i < 5; i++) {
      t = performance.now();
      const est = await inspector.run("estimate");
      estRuns.push(performance.now() - t);
      for (const h of est.handlers) {
        const truth = exact.handlers.find((x) => x.prefix === h.prefix)?.keyCount ?? 0;
        if (truth === 0) continue;
        worstRel = Math.max(worstRel, Math.abs(h.keyCount - truth) / truth);
        worstBoundRel = Math.max(worstBoundRel, h.errorBound / truth);
      }
    }
    results["inspect.estimate_ms_1m_keys"] = Math.round(median(estRuns));
    details.estimate = {
      keys: dbsize,
      runs: estRuns.map(Math.round),
      medianMs: Math.round(median(estRuns)),
      worstHandlerErrorPct: +(worstRel * 100).toFixed(2),
      statedBoundPct999: +(worstBoundRel * 100).toFixed(2),
      draws: DEFAULT_KEY_INSPECTOR_OPTIONS.estimateSamples,
      method: "blocks of ~16 keys from random SCAN cursors, ≤ 1.5 ms script calls, 2 in flight",
    };
    console.log(
      `\n2. estimate at ${fmt(dbsize)} keys: median ${fmt(median(estRuns))} ms over 5 runs (${estRuns.map((x) => fmt(x)).join(", ")})`,
    );
    console.log(
      `   worst per-handler error ${(worstRel * 100).toFixed(2)}% (stated 99.9% bound up to ±${(worstBoundRel * 100).toFixed(2)}%)`,
    );

    // 3. /api/overview with 50 viewers.
    const registry = new Registry();
    const rec = dedupRecorder(registry, "notification");
    driver = setInterval(() => {
      for (const h of ["on-review-created", "on-user-banned", "on-page-viewed"]) {
        for (let i = 0; i < 20; i++) rec.result("demo.events", h, i < 1 ? "deduplicated" : "success");
      }
      rec.check("on-review-created", performance.now(), 0.002);
    }, 100);
    const appPort = await freePort();
    app = createServer(
      (_req, res) =>
        void registry.metrics().then((b) => res.writeHead(200, { "content-type": registry.contentType }).end(b)),
    );
    await new Promise<void>((r) => app!.listen(appPort, "127.0.0.1", r));
    prom = await startOwnPrometheus({
      targets: [`127.0.0.1:${appPort}`],
      ruleFiles: [`${process.cwd()}/infra/prometheus/rules/dedup.yml`],
      intervalSec: 1,
    });
    await new Promise((r) => setTimeout(r, 3000)); // two scrapes, so rates exist
    const ctx = createObserveContext({
      metrics: new PrometheusSource(prom.url),
      redis: client,
      inspector: { exactMaxKeys: 100_000_000 },
    });
    await ctx.inspector!.run("estimate");
    setObserveContext(ctx);
    const get = URL_ARG
      ? async () => (await fetch(`${URL_ARG.replace(/\/$/, "")}/api/overview?range=1h`)).status
      : async () => {
          const res = await overviewGET(new Request("http://localhost/api/overview?range=1h"));
          await res.text();
          return res.status;
        };
    const before1 = upstreamCalls();
    const one = await load(1, LOAD_MS, get);
    const after1 = upstreamCalls();
    const many = await load(VIEWERS, LOAD_MS, get);
    const after50 = upstreamCalls();
    const up1 = after1.prometheus - before1.prometheus;
    const up50 = after50.prometheus - after1.prometheus;
    results["api.overview_p95_ms_50_viewers"] = +percentile(many.lat, 95).toFixed(1);
    details.overview = {
      target: URL_ARG ?? "in-process route GET",
      loadMs: LOAD_MS,
      oneViewer: {
        requests: one.lat.length,
        p50: +percentile(one.lat, 50).toFixed(1),
        p95: +percentile(one.lat, 95).toFixed(1),
        prometheusCalls: up1,
        errors: one.errors,
      },
      fiftyViewers: {
        requests: many.lat.length,
        p50: +percentile(many.lat, 50).toFixed(1),
        p95: +percentile(many.lat, 95).toFixed(1),
        p99: +percentile(many.lat, 99).toFixed(1),
        prometheusCalls: up50,
        errors: many.errors,
      },
      redisCallsDuringLoad: after50.redis - before1.redis,
    };
    console.log(
      `\n3. /api/overview (${URL_ARG ? `HTTP ${URL_ARG}` : "route GET in-process"}, Prometheus ${prom.url}), ${LOAD_MS / 1000} s each:`,
    );
    console.log(
      `   1 viewer:   ${fmt(one.lat.length)} requests, p50 ${percentile(one.lat, 50).toFixed(1)} ms, p95 ${percentile(one.lat, 95).toFixed(1)} ms, Prometheus calls ${up1}`,
    );
    console.log(
      `   50 viewers: ${fmt(many.lat.length)} requests, p50 ${percentile(many.lat, 50).toFixed(1)} ms, p95 ${percentile(many.lat, 95).toFixed(1)} ms, p99 ${percentile(many.lat, 99).toFixed(1)} ms, Prometheus calls ${up50}, errors ${many.errors}`,
    );
    if (URL_ARG)
      console.log("   (upstream calls are counted in this process only: with --url they are the server's, not shown)");
    console.log(
      `   Redis calls during both loads: ${after50.redis - before1.redis} (background inspection only; the overview reads its cached result)`,
    );
    setObserveContext(null);
    client.disconnect();
    admin.disconnect();
  } finally {
    if (driver) clearInterval(driver);
    await prom?.stop();
    if (app) await new Promise((r) => app!.close(r));
    await redisSrv?.stop();
  }
  console.log(`\n${JSON.stringify(results)}`);
  if (JSON_OUT) writeFileSync(JSON_OUT, `${JSON.stringify({ ...results, details }, null, 2)}\n`);
}

runMain(main);
