/**
 * `tsx scripts/fuzz-api.ts --url http://127.0.0.1:<port> [--requests 10000] [--concurrency 8]
 *   [--pid <server pid>] [--forbidden a,b,...] [--seed 1] [--json out.json]`
 *
 * Random and adversarial requests against every route of a running app (discovered from app/**:
 * each `route.ts` with its exported methods, each `page.tsx`; dynamic segments filled in): glob
 * characters, very long strings, control characters, unicode, negative/huge/non-numeric numbers,
 * wrong types, path traversal, unknown and repeated parameters, malformed and hostile JSON bodies,
 * Redis commands and PromQL as values. Reports, and fails (exit 1) on: any 5xx, any response body
 * containing one of the `--forbidden` strings (e.g. names of keys outside the configured
 * prefixes), a request that got no answer within 15 s, the server process gone, or its RSS
 * (`/proc/<pid>/status`, summed over the process and its children) growing by more than
 * `--max-rss-growth-mb` (default 256).
 *
 * Only for an app you started yourself on 127.0.0.1: state-changing routes are fuzzed too.
 */
import { writeFileSync } from "node:fs";
import { optArg } from "./lib/args";
import { MAX_BODY_BYTES } from "@/server/access";
import { seedRandom } from "./lib/fuzz/random";
import { emptyReport, printReport, rssKb, type FuzzReport } from "./lib/fuzz/report";
import { discoverRoutes } from "./lib/fuzz/routes";
import { fuzzOne, type FuzzTarget } from "./lib/fuzz/send";

export { decodable } from "./lib/fuzz/request-parts";
export { discoverRoutes, exportedMethods } from "./lib/fuzz/routes";
export type { FuzzReport } from "./lib/fuzz/report";

const BASE = optArg("url") ?? "http://127.0.0.1:3000";
const REQUESTS = Number(optArg("requests") ?? 10_000);
const CONCURRENCY = Number(optArg("concurrency") ?? 8);
const PID = optArg("pid") ? Number(optArg("pid")) : undefined;
const FORBIDDEN = (optArg("forbidden") ?? "").split(",").filter(Boolean);
const MAX_RSS_GROWTH_MB = Number(optArg("max-rss-growth-mb") ?? 256);
/** The app's request body limit (server/access.ts MAX_BODY_BYTES): a larger body is refused by its Content-Length. */
const BODY_LIMIT_BYTES = MAX_BODY_BYTES;
const JSON_OUT = optArg("json");
const SEED = Number(optArg("seed") ?? Date.now() % 1_000_000);
seedRandom(SEED);

if (!new URL(BASE).hostname.match(/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/)) {
  console.error("fuzz-api: --url must be a loopback address (an app you started yourself)");
  process.exit(2);
}

/** CONCURRENCY loops sending requests until REQUESTS are sent, the RSS sampled after every tenth. */
async function fuzzAll(target: FuzzTarget, rep: FuzzReport): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next++;
        await fuzzOne(target, rep);
        rep.requests++;
        if (PID && rep.requests % Math.max(1, Math.floor(REQUESTS / 10)) === 0) rep.rssTimelineKb.push(rssKb(PID));
        if (rep.requests % 1000 === 0)
          console.log(
            `[fuzz-api] ${rep.requests}/${REQUESTS} requests, ${Object.entries(rep.byStatus)
              .map(([s, n]) => `${s}:${n}`)
              .join(" ")}`,
          );
      }
    }),
  );
}

/** After the run: the server must still answer, its RSS must not have grown past the limit, nothing found. */
async function judge(rep: FuzzReport): Promise<void> {
  // Still up: one more plain request must answer.
  try {
    const res = await fetch(`${BASE}/api/health`, { signal: AbortSignal.timeout(10_000) });
    rep.serverAlive = rep.serverAlive && res.status < 500;
  } catch {
    rep.serverAlive = false;
  }
  if (PID) rep.rssKb.end = rssKb(PID);
  const growthMb = rep.rssKb.start !== null && rep.rssKb.max !== null ? (rep.rssKb.max - rep.rssKb.start) / 1024 : 0;
  rep.ok =
    rep.serverErrors.length === 0 &&
    rep.leaks.length === 0 &&
    rep.noAnswer.length === 0 &&
    rep.serverAlive &&
    growthMb <= MAX_RSS_GROWTH_MB;
}

async function main(): Promise<void> {
  const routes = discoverRoutes();
  const rep = emptyReport(SEED);
  if (PID) rep.rssKb.start = rep.rssKb.max = rssKb(PID);
  const t0 = Date.now();
  const sampler = PID
    ? setInterval(() => {
        const r = rssKb(PID);
        if (r === null) rep.serverAlive = false;
        else rep.rssKb.max = Math.max(rep.rssKb.max ?? 0, r);
      }, 250)
    : null;
  await fuzzAll({ base: BASE, routes, forbidden: FORBIDDEN, bodyLimitBytes: BODY_LIMIT_BYTES }, rep);
  if (sampler) clearInterval(sampler);
  rep.seconds = (Date.now() - t0) / 1000;
  await judge(rep);
  printReport(rep, routes.length);
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(rep, null, 2));
  process.exit(rep.ok ? 0 : 1);
}

if (require.main === module) {
  void main().catch((e: unknown) => {
    console.error(`[fuzz-api] ${(e as Error)?.stack ?? e}`);
    process.exit(2);
  });
}
