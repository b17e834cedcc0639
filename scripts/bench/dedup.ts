/**
 * `npm run bench:dedup` — claims/s of the dedup library against the real Redis, next to
 * `redis-benchmark -t set` run by the same command, and the middleware's own overhead per message.
 *
 *   npm run bench:dedup -- [--n 50000] [--batch 1000] [--concurrency 512] [--redis redis://127.0.0.1:6379] [--json out.json]
 *   npm run bench:dedup -- --overhead-only [--json out.json]   (only the middleware overhead: in-process, no Redis)
 *   npm run bench:dedup -- --inbox-only [--inbox-messages 2000] [--json out.json]
 *                                                              (only the PostgreSQL inbox's cost: DATABASE_URL)
 *   npm run bench:dedup -- --no-inbox …                        (everything but the inbox: `npm run bench`'s
 *                                                              dedup step, whose inbox step runs --inbox-only)
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
 * - the PostgreSQL inbox's cost per message (`./dedup/inbox.ts`): a plain transaction with the
 *   handler's INSERT against the same under the `inbox` middleware (DATABASE_URL, default the
 *   stack's `postgres://postgres@127.0.0.1:5432/test`; skipped with a note when unreachable), and its
 *   throughput against that floor (`dedup.inbox_vs_floor`: messages/s one at a time, inbox ÷ plain).
 * Targets: batch claims ≥ 25% of the -P 64 SET rate (headline: median over five rounds that each run
 * redis-benchmark -P 64 right next to the lease batch claims, so a shared machine's changing load
 * cancels); overhead ≤ 3 µs.
 * `--json <path>` writes [{ name, value, unit, reference, ratio }] for `npm run bench`; the last
 * stdout line is the same as one JSON line.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { flag } from "../lib/args";
import { hotPathCosts } from "./hot-path-costs";
import { inboxCosts, inboxLine, inboxRows, type InboxFigures } from "./dedup/inbox";
import { claimsPerSec, endToEnd } from "./dedup/claims";
import { overheadLine, overheadRow } from "./dedup/overhead";
import { interleavedRatios } from "./dedup/ratios";
import { redisBenchmark } from "./dedup/redis-benchmark";
import { printClaims, printHotPath, resultRows } from "./dedup/report";
import { BATCH, CONCURRENCY, INBOX_MESSAGES, JSON_PATH, MARKINGS, N, REDIS_URL, url } from "./dedup/settings";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The inbox's figures, or null (said on stdout) when PostgreSQL cannot be reached. */
async function inboxOrNote(): Promise<InboxFigures | null> {
  try {
    const f = await inboxCosts(DATABASE_URL, INBOX_MESSAGES);
    console.log(inboxLine(f));
    return f;
  } catch (e) {
    console.log(`inbox: not measured (PostgreSQL at ${DATABASE_URL}: ${(e as Error).message})`);
    return null;
  }
}

/** `--inbox-only`: the inbox's figures alone (PostgreSQL only). */
async function inboxOnly(): Promise<void> {
  console.log(
    `bench:dedup --inbox-only  node ${process.version}  ${cpus().length} cpus, load ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}  ${new Date().toISOString()}`,
  );
  const f = await inboxOrNote();
  const results = f ? inboxRows(f) : [];
  if (JSON_PATH) writeFileSync(JSON_PATH, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results));
}

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

/**
 * Every marking's claims in every mode and end to end, between two redis-benchmark references;
 * the ratios use their mean, so a change of load on a shared machine during the run shows up as
 * the spread printed.
 */
async function claimsBetweenReferences(client: Redis, auto: Redis) {
  const p1a = redisBenchmark(1, 100_000);
  const p64a = redisBenchmark(64, 1_000_000);
  console.log(
    `redis-benchmark -t set -q (50 clients), before:  -P 1: ${p1a.toFixed(0)} SET/s   -P 64: ${p64a.toFixed(0)} SET/s`,
  );
  // Warm-up (JIT, connections, script cache): one small pass of every mode, not recorded.
  for (const m of MARKINGS) await claimsPerSec(client, auto, m, Math.min(N, 5_000));
  const claims: Record<string, Record<string, number>> = {};
  const e2e: Record<string, number> = {};
  for (const m of MARKINGS) {
    claims[m] = await claimsPerSec(client, auto, m, N);
    e2e[m] = await endToEnd(client, m, N);
  }
  const p1b = redisBenchmark(1, 100_000);
  const p64b = redisBenchmark(64, 1_000_000);
  const p1 = (p1a + p1b) / 2;
  const p64 = (p64a + p64b) / 2;
  console.log(
    `redis-benchmark -t set -q (50 clients), after:   -P 1: ${p1b.toFixed(0)} SET/s   -P 64: ${p64b.toFixed(0)} SET/s   → reference (mean): -P 1 ${p1.toFixed(0)}, -P 64 ${p64.toFixed(0)}`,
  );
  return { claims, e2e, p1, p64 };
}

async function main(): Promise<void> {
  if (flag("overhead-only")) return overheadOnly();
  if (flag("inbox-only")) return inboxOnly();
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const auto = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  try {
    console.log(
      `bench:dedup  n=${N} batch=${BATCH} concurrency=${CONCURRENCY} redis=${url.host}  node ${process.version}  ${cpus().length} cpus, load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}  ${new Date().toISOString()}`,
    );
    const measured = await claimsBetweenReferences(client, auto);
    printClaims(measured);
    const overhead = await overheadLine();
    const hot = await hotPathCosts();
    printHotPath(hot);
    const inter = await interleavedRatios(client);
    console.log(`\nlease batch claims vs redis-benchmark -P 64, interleaved rounds:\n  ${inter.rounds.join("\n  ")}`);
    const ratio = inter.single;
    const ratio4 = inter.x4;
    console.log(
      `\ntargets (median of the interleaved rounds): batch claims (lease) / P64 = ${ratio.toFixed(3)}, with 4 batches in flight ${ratio4.toFixed(3)} (≥ 0.25: ${ratio >= 0.25 ? "met" : ratio4 >= 0.25 ? "met only with 4 in flight" : "MISSED"});  overhead (lease) = ${overhead.lease!.toFixed(2)} µs (≤ 3: ${overhead.lease! <= 3 ? "met" : "MISSED"})`,
    );
    const inboxFigures = flag("no-inbox") ? null : await inboxOrNote();
    const results = [
      ...resultRows({ ...measured, overhead, hot, ratio, ratio4 }),
      ...(inboxFigures ? inboxRows(inboxFigures) : []),
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
