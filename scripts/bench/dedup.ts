/**
 * `npm run bench:dedup` — claims/s of the dedup library against the real Redis, next to
 * `redis-benchmark -t set` run by the same command, and the middleware's own overhead per message.
 *
 *   npm run bench:dedup -- [--n 50000] [--batch 1000] [--concurrency 512] [--redis redis://127.0.0.1:6379] [--json out.json]
 *   npm run bench:dedup -- --overhead-only [--json out.json]   (only the middleware overhead: in-process, no Redis)
 *
 * Figures (one run, same machine, so noise largely cancels):
 * - redis-benchmark SET rate with -P 1 and -P 64 (default 50 clients, -q, bounded -n);
 * - per marking (lease, release, naive): claims/s for
 *     per-message   — one claim awaited at a time (latency-bound),
 *     autopipelined — `--concurrency` claims in flight on an ioredis client with enableAutoPipelining,
 *     batch         — `Deduplicator.prepareBatch` of `--batch` messages (keys, tokens, ONE round trip:
 *                     one script call on a standalone server), one batch at a time;
 *     batch x4      — the same with four batches in flight (four partitions consumed concurrently);
 *   a "claim" is the one round trip that decides new / duplicate / in progress (the lease marking's
 *   later `done` mark is measured in the end-to-end line);
 * - end-to-end batch msgs/s through Router.deliverBatch (claim + no-op handler + done mark);
 * - middleware overhead in µs per message with the in-memory repository (lease, metrics on):
 *   CPU time through the Deduplicator minus CPU time of the bare no-op handler (wall time too);
 * - what each piece of the hot path adds, CPU µs per message through the Router (the payload's
 *   SHA-256 fingerprint, `handlerTimer`, `timeout`, a produced message published inside the stack,
 *   the whole `defaultStack`) and the fingerprint alone per payload size (`./hot-path-costs.ts`).
 * Targets: batch claims ≥ 25% of the -P 64 SET rate (headline: median over five rounds that each run
 * redis-benchmark -P 64 right next to the lease batch claims, so a shared machine's changing load
 * cancels); overhead ≤ 3 µs.
 * `--json <path>` writes [{ name, value, unit, reference, ratio }] for `npm run bench`; the last
 * stdout line is the same as one JSON line.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import {
  Deduplicator,
  type Marking,
  MemoryRepository,
  newMessage,
  type Handler,
  type Message,
  MemoryPubSub,
  RedisRepository,
  CLAIMED_PREFIX,
  NAIVE_VALUE,
  PROCESSING_PREFIX,
  Router,
} from "../../server/dedup";
import { arg, flag } from "../lib/args";
import { hotPathCosts, VARIANTS } from "./hot-path-costs";
import { median } from "../lib/stats";

let N = Number(arg("n", "50000"));
const BATCH = Number(arg("batch", "1000"));
const CONCURRENCY = Number(arg("concurrency", "512"));
const REDIS_URL = arg("redis", process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const JSON_PATH = flag("json") ? arg("json", "") : "";
for (const [k, v] of Object.entries({ n: N, batch: BATCH, concurrency: CONCURRENCY })) {
  if (!Number.isInteger(v) || v < 1 || v > 10_000_000)
    throw new RangeError(`bench-dedup: --${k} must be an integer in [1, 10000000]`);
}
const url = new URL(REDIS_URL);
const MARKINGS: Marking[] = ["lease", "release", "naive"];
const run = `bench${Math.random().toString(36).slice(2, 8)}`;

/** The one key `redis-benchmark -t set` writes; deleted after the reference unless it was there before. */
const REDIS_BENCHMARK_KEY = "key:__rand_int__";

function redisBenchmark(pipeline: number, n: number): number {
  const cli = (...args: string[]) =>
    spawnSync("redis-cli", ["-h", url.hostname, "-p", url.port || "6379", ...args], {
      encoding: "utf8",
      timeout: 10_000,
    });
  const existed = cli("EXISTS", REDIS_BENCHMARK_KEY).stdout?.trim() === "1";
  try {
    return redisBenchmarkRate(pipeline, n);
  } finally {
    if (!existed) cli("DEL", REDIS_BENCHMARK_KEY);
  }
}

function redisBenchmarkRate(pipeline: number, n: number): number {
  const res = spawnSync(
    "redis-benchmark",
    ["-h", url.hostname, "-p", url.port || "6379", "-t", "set", "-P", String(pipeline), "-n", String(n), "-q"],
    {
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  if (res.error)
    throw new Error(`redis-benchmark failed: ${res.error.message} (install it: apt-get install -y redis-tools)`);
  const matches = [...`${res.stdout}`.matchAll(/SET: ([\d.]+) requests per second/g)];
  const last = matches.at(-1);
  if (!last) throw new Error(`could not parse redis-benchmark output: ${res.stdout.slice(-300)} ${res.stderr}`);
  return Number(last[1]);
}

function valueFor(marking: Marking, i: number): string {
  return marking === "lease"
    ? `${PROCESSING_PREFIX}b${i}`
    : marking === "release"
      ? `${CLAIMED_PREFIX}b${i}`
      : NAIVE_VALUE;
}

async function cleanup(client: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = (await client.call("SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", 5000)) as [
      string,
      string[],
    ];
    cursor = next;
    if (keys.length) await client.call("UNLINK", ...keys);
  } while (cursor !== "0");
}

function messages(n: number, tag: string): Message[] {
  return Array.from({ length: n }, (_, i) => {
    const m = newMessage(`${tag}-${i}`, "");
    m.context = { handler: "h", topic: "bench" };
    return m;
  });
}

async function timeIt(fn: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function claimsPerSec(client: Redis, auto: Redis, marking: Marking): Promise<Record<string, number>> {
  const ttl = 60_000;
  const out: Record<string, number> = {};
  const repo = new RedisRepository(client);
  const seqN = Math.min(N, 20_000);
  let p = `${run}:${marking}:seq:dedup:h:`;
  out["per-message"] =
    seqN /
    (await timeIt(async () => {
      for (let i = 0; i < seqN; i++) await repo.claim(p + i, valueFor(marking, i), ttl);
    }));
  await cleanup(client, `${run}:${marking}:seq`);

  const autoRepo = new RedisRepository(auto);
  p = `${run}:${marking}:auto:dedup:h:`;
  let next = 0;
  out.autopipelined =
    N /
    (await timeIt(async () => {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < N; i = next++) await autoRepo.claim(p + i, valueFor(marking, i), ttl);
        }),
      );
    }));
  await cleanup(client, `${run}:${marking}:auto`);

  const dedup = new Deduplicator({
    repository: repo,
    prefix: `${run}:${marking}:batch:dedup:h`,
    marking,
    ttlMs: ttl,
    leaseMs: ttl,
  });
  // naive marking has no batch hook in the middleware (Watermill claims right before the handler):
  // its batch figure is the repository's claimBatch with the naive value.
  const msgs = messages(N, `${marking}`);
  const cpu0 = process.cpuUsage();
  out.batch =
    N /
    (await timeIt(async () => {
      for (let i = 0; i < N; i += BATCH) {
        const chunk = msgs.slice(i, i + BATCH);
        if (marking === "naive")
          await repo.claimBatch(chunk.map((m) => ({ key: dedup.keyOf(m), value: NAIVE_VALUE, ttlMs: ttl })));
        else await dedup.prepareBatch(chunk);
      }
    }));
  const cpu = process.cpuUsage(cpu0);
  // Client CPU per batch claim: independent of the machine's load, unlike claims/s.
  out["batch client cpu us"] = (cpu.user + cpu.system) / N;
  await cleanup(client, `${run}:${marking}:batch`);

  // Four partitions' batches in flight at once (a consumer with partitionsConsumedConcurrently = 4).
  const dedup4 = new Deduplicator({
    repository: repo,
    prefix: `${run}:${marking}:batch4:dedup:h`,
    marking,
    ttlMs: ttl,
    leaseMs: ttl,
  });
  const msgs4 = messages(N, `${marking}4`);
  let at = 0;
  out["batch x4"] =
    N /
    (await timeIt(async () => {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let i = at; i < N; i = at) {
            at += BATCH;
            const chunk = msgs4.slice(i, i + BATCH);
            if (marking === "naive")
              await repo.claimBatch(chunk.map((m) => ({ key: dedup4.keyOf(m), value: NAIVE_VALUE, ttlMs: ttl })));
            else await dedup4.prepareBatch(chunk);
          }
        }),
      );
    }));
  await cleanup(client, `${run}:${marking}:batch4`);
  return out;
}

async function endToEnd(client: Redis, marking: Marking): Promise<number> {
  const prefix = `${run}:${marking}:e2e:dedup:h`;
  const router = new Router({ onError: (e) => console.error(e.error) });
  const ps = new MemoryPubSub();
  const dedup = new Deduplicator({
    repository: new RedisRepository(client),
    prefix,
    marking,
    registry: new Registry(),
  });
  router.addHandler({
    name: "h",
    topic: "bench",
    subscriber: ps,
    handler: async () => undefined,
    middleware: [dedup.middleware],
  });
  const sink = router.sink("h");
  const msgs = messages(N, `e2e-${marking}`);
  const secs = await timeIt(async () => {
    for (let i = 0; i < N; i += BATCH) {
      const out = await sink.deliverBatch(msgs.slice(i, i + BATCH).map((m) => ({ ...m, context: {} })));
      if (out.length !== Math.min(BATCH, N - i) || out.some((o) => o !== "ack"))
        throw new Error("end-to-end batch did not ack every message");
    }
  });
  await cleanup(client, prefix);
  return N / secs;
}

/**
 * Middleware overhead: CPU time (process.cpuUsage: this process only, so the other tenants of a
 * shared machine do not inflate it the way they inflate wall time) of N messages through the
 * Deduplicator minus N through the bare no-op handler; median of 7 rounds. Wall time is printed
 * alongside.
 */
async function overheadUs(marking: Marking): Promise<{ cpu: number; wall: number }> {
  const n = 100_000;
  const noop: Handler = async () => undefined;
  const cpu: number[] = [];
  const wall: number[] = [];
  const cpuNow = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  for (let round = 0; round < 7; round++) {
    const msgs = messages(n, `ovh${round}`);
    const d = new Deduplicator({
      repository: new MemoryRepository(),
      service: "ovh",
      marking,
      registry: new Registry(),
    });
    const h = d.middleware(noop);
    let c0 = cpuNow();
    const bareWall = await timeIt(async () => {
      for (const m of msgs) await noop(m);
    });
    const bareCpu = cpuNow() - c0;
    c0 = cpuNow();
    const dedupWall = await timeIt(async () => {
      for (const m of msgs) await h(m);
    });
    const dedupCpu = cpuNow() - c0;
    cpu.push((dedupCpu - bareCpu) / n);
    wall.push(((dedupWall - bareWall) / n) * 1e6);
  }
  return { cpu: median(cpu), wall: median(wall) };
}

/**
 * The headline ratio, robust to the load of a shared machine: five rounds, each a short
 * `redis-benchmark -P 64` run right next to a short run of lease batch claims (single stream and
 * four in flight); the ratio of each round, then the median over rounds.
 */
async function interleavedRatios(client: Redis): Promise<{ single: number; x4: number; rounds: string[] }> {
  const repo = new RedisRepository(client);
  const single: number[] = [];
  const x4: number[] = [];
  const rounds: string[] = [];
  const n = Math.min(N, 20_000);
  for (let r = -1; r < 5; r++) {
    const ref = r < 0 ? 1 : redisBenchmark(64, 300_000); // round -1 warms the JIT up and is not recorded
    const prefix = `${run}:ratio${r}`;
    const d = new Deduplicator({ repository: repo, prefix: `${prefix}:dedup:h`, ttlMs: 60_000, leaseMs: 60_000 });
    const msgs = messages(n, `r${r}`);
    const one =
      n /
      (await timeIt(async () => {
        for (let i = 0; i < n; i += BATCH) await d.prepareBatch(msgs.slice(i, i + BATCH));
      }));
    const msgs4 = messages(n, `r4${r}`);
    let at = 0;
    const four =
      n /
      (await timeIt(async () => {
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            for (let i = at; i < n; i = at) {
              at += BATCH;
              await d.prepareBatch(msgs4.slice(i, i + BATCH));
            }
          }),
        );
      }));
    await cleanup(client, prefix);
    if (r < 0) continue;
    single.push(one / ref);
    x4.push(four / ref);
    rounds.push(
      `P64 ${ref.toFixed(0)}/s: ${one.toFixed(0)} (${(one / ref).toFixed(3)}), x4 ${four.toFixed(0)} (${(four / ref).toFixed(3)})`,
    );
  }
  return { single: median(single), x4: median(x4), rounds };
}

/** The middleware overhead per marking, printed as in the full run; the lease figure is the target's. */
async function overheadLine(): Promise<Record<string, number>> {
  const overhead: Record<string, number> = {};
  const lines: string[] = [];
  for (const m of MARKINGS) {
    const o = await overheadUs(m);
    overhead[m] = o.cpu;
    lines.push(`${m} ${o.cpu.toFixed(2)} µs CPU (${o.wall.toFixed(2)} µs wall)`);
  }
  console.log(
    `\nmiddleware overhead per message, in-memory repository, metrics on (median of 7 × 100k):  ${lines.join("   ")}`,
  );
  return overhead;
}

const overheadRow = (lease: number) => ({
  name: "dedup.middleware_overhead_us",
  value: +lease.toFixed(3),
  unit: "us",
  reference: 3,
  ratio: +(lease / 3).toFixed(4),
  target: 3,
});

/** `--overhead-only`: the overhead figures alone (no Redis, no reference runs). */
async function overheadOnly(): Promise<void> {
  console.log(
    `bench:dedup --overhead-only  node ${process.version}  ${cpus().length} cpus, load ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}  ${new Date().toISOString()}`,
  );
  const overhead = await overheadLine();
  console.log(`overhead (lease) = ${overhead.lease!.toFixed(2)} µs (≤ 3: ${overhead.lease! <= 3 ? "met" : "MISSED"})`);
  const results = [overheadRow(overhead.lease!)];
  if (JSON_PATH) writeFileSync(JSON_PATH, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results));
}

async function main(): Promise<void> {
  if (flag("overhead-only")) return overheadOnly();
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const auto = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  try {
    console.log(
      `bench:dedup  n=${N} batch=${BATCH} concurrency=${CONCURRENCY} redis=${url.host}  node ${process.version}  ${cpus().length} cpus, load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}  ${new Date().toISOString()}`,
    );
    // The reference runs before and after the claims; the ratios use the mean, so a change of load
    // on a shared machine during the run shows up as the spread printed here.
    const p1a = redisBenchmark(1, 100_000);
    const p64a = redisBenchmark(64, 1_000_000);
    console.log(
      `redis-benchmark -t set -q (50 clients), before:  -P 1: ${p1a.toFixed(0)} SET/s   -P 64: ${p64a.toFixed(0)} SET/s`,
    );

    // Warm-up (JIT, connections, script cache): one small pass of every mode, not recorded.
    {
      const saved = N;
      N = Math.min(N, 5_000);
      for (const m of MARKINGS) await claimsPerSec(client, auto, m);
      N = saved;
    }
    const claims: Record<string, Record<string, number>> = {};
    const e2e: Record<string, number> = {};
    for (const m of MARKINGS) {
      claims[m] = await claimsPerSec(client, auto, m);
      e2e[m] = await endToEnd(client, m);
    }
    const p1b = redisBenchmark(1, 100_000);
    const p64b = redisBenchmark(64, 1_000_000);
    const p1 = (p1a + p1b) / 2;
    const p64 = (p64a + p64b) / 2;
    console.log(
      `redis-benchmark -t set -q (50 clients), after:   -P 1: ${p1b.toFixed(0)} SET/s   -P 64: ${p64b.toFixed(0)} SET/s   → reference (mean): -P 1 ${p1.toFixed(0)}, -P 64 ${p64.toFixed(0)}`,
    );
    console.log(
      "\nclaims/s (one connection)  per-message  autopipelined     batch  batch x4   batch/P64  batchx4/P64  auto/P64  per-msg/P1   e2e batch msgs/s   batch client CPU µs/claim",
    );
    for (const m of MARKINGS) {
      const c = claims[m]!;
      console.log(
        `  ${m.padEnd(24)} ${c["per-message"]!.toFixed(0).padStart(11)} ${c.autopipelined!.toFixed(0).padStart(14)} ${c.batch!.toFixed(0).padStart(9)} ${c["batch x4"]!.toFixed(0).padStart(9)}` +
          `   ${(c.batch! / p64).toFixed(3).padStart(9)} ${(c["batch x4"]! / p64).toFixed(3).padStart(12)} ${(c.autopipelined! / p64).toFixed(3).padStart(9)} ${(c["per-message"]! / p1).toFixed(3).padStart(11)} ${e2e[m]!.toFixed(0).padStart(18)} ${c["batch client cpu us"]!.toFixed(2).padStart(27)}`,
      );
    }
    const overhead = await overheadLine();

    const hot = await hotPathCosts();
    console.log(
      `\nhot path through Router.deliver, CPU µs per message (in-memory repository, lease, metrics on; median of 7 interleaved rounds × 50k):`,
    );
    for (const v of VARIANTS)
      console.log(
        `  ${v.name.padEnd(14)} ${hot.absolute[v.name]!.toFixed(2).padStart(6)} µs${v.base ? `   adds ${hot.added[v.name]!.toFixed(2)} µs over ${v.base}` : ""}`,
      );
    console.log(
      `  payloadFingerprint alone (SHA-256, 42 bits): ${Object.entries(hot.fingerprint)
        .map(([size, us]) => `${size} B ${us.toFixed(2)} µs`)
        .join(", ")}`,
    );

    const inter = await interleavedRatios(client);
    console.log(`\nlease batch claims vs redis-benchmark -P 64, interleaved rounds:\n  ${inter.rounds.join("\n  ")}`);
    const ratio = inter.single;
    const ratio4 = inter.x4;
    console.log(
      `\ntargets (median of the interleaved rounds): batch claims (lease) / P64 = ${ratio.toFixed(3)}, with 4 batches in flight ${ratio4.toFixed(3)} (≥ 0.25: ${ratio >= 0.25 ? "met" : ratio4 >= 0.25 ? "met only with 4 in flight" : "MISSED"});  overhead (lease) = ${overhead.lease!.toFixed(2)} µs (≤ 3: ${overhead.lease! <= 3 ? "met" : "MISSED"})`,
    );
    const results = [
      {
        name: "dedup.batch_claims_vs_redis_benchmark_p64",
        value: +ratio.toFixed(4),
        unit: "ratio",
        reference: +p64.toFixed(0),
        ratio: +ratio.toFixed(4),
        target: 0.25,
      },
      {
        name: "dedup.batch_x4_claims_vs_redis_benchmark_p64",
        value: +ratio4.toFixed(4),
        unit: "ratio",
        reference: +p64.toFixed(0),
        ratio: +ratio4.toFixed(4),
        target: 0.25,
      },
      overheadRow(overhead.lease!),
      ...MARKINGS.flatMap((m) =>
        Object.entries(claims[m]!)
          .filter(([mode]) => mode !== "batch client cpu us")
          .map(([mode, v]) => ({
            name: `dedup.claims_per_sec.${m}.${mode.replace(" ", "")}`,
            value: +v.toFixed(0),
            unit: "claims/s",
            reference: +(mode === "per-message" ? p1 : p64).toFixed(0),
            ratio: +(v / (mode === "per-message" ? p1 : p64)).toFixed(4),
          })),
      ),
      ...MARKINGS.map((m) => ({
        name: `dedup.batch_client_cpu_us_per_claim.${m}`,
        value: +claims[m]!["batch client cpu us"]!.toFixed(3),
        unit: "us",
        reference: 0,
        ratio: 0,
      })),
      ...VARIANTS.map((v) => ({
        name: `dedup.hot_path_us.${v.name.replace(/ /g, "_")}`,
        value: +(v.base ? hot.added[v.name]! : hot.absolute[v.name]!).toFixed(3),
        unit: "us",
        reference: 0,
        ratio: 0,
        detail: v.base
          ? `CPU µs/msg added over ${v.base}; absolute ${hot.absolute[v.name]!.toFixed(3)}`
          : "CPU µs/msg, absolute",
      })),
      ...Object.entries(hot.fingerprint).map(([size, us]) => ({
        name: `dedup.fingerprint_us.${size}B`,
        value: +us.toFixed(3),
        unit: "us",
        reference: 0,
        ratio: 0,
      })),
      ...MARKINGS.map((m) => ({
        name: `dedup.e2e_batch_msgs_per_sec.${m}`,
        value: +e2e[m]!.toFixed(0),
        unit: "msgs/s",
        reference: +p64.toFixed(0),
        ratio: +(e2e[m]! / p64).toFixed(4),
      })),
    ];
    if (JSON_PATH) writeFileSync(JSON_PATH, `${JSON.stringify(results, null, 2)}\n`);
    console.log(JSON.stringify(results));
  } finally {
    await Promise.all([client.quit(), auto.quit()]);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
