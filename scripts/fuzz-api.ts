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
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { optArg } from "./lib/args";
import { MAX_BODY_BYTES } from "@/server/access";

const ROOT = join(__dirname, "..");

const BASE = optArg("url") ?? "http://127.0.0.1:3000";
const REQUESTS = Number(optArg("requests") ?? 10_000);
const CONCURRENCY = Number(optArg("concurrency") ?? 8);
const PID = optArg("pid") ? Number(optArg("pid")) : undefined;
const FORBIDDEN = (optArg("forbidden") ?? "").split(",").filter(Boolean);
const MAX_RSS_GROWTH_MB = Number(optArg("max-rss-growth-mb") ?? 256);
/** The app's request body limit (server/access.ts MAX_BODY_BYTES): a larger body is refused by its Content-Length. */
const BODY_LIMIT_BYTES = MAX_BODY_BYTES;
const JSON_OUT = optArg("json");
let seed = Number(optArg("seed") ?? Date.now() % 1_000_000);
const SEED = seed;

if (!new URL(BASE).hostname.match(/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/)) {
  console.error("fuzz-api: --url must be a loopback address (an app you started yourself)");
  process.exit(2);
}

/** mulberry32: a seeded PRNG so a failing run can be repeated with --seed. */
function rand(): number {
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const chance = (p: number) => rand() < p;

// --- routes ----------------------------------------------------------------------------------

interface Route {
  /** Path template, e.g. /api/workshop/runs/[runId] */
  template: string;
  methods: string[];
  kind: "api" | "page";
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name === "route.ts" || name === "page.tsx") out.push(p);
  }
  return out;
}

/** Every route of app/**, with the HTTP methods its route.ts exports (pages: GET). */
export function discoverRoutes(appDir = join(ROOT, "app")): Route[] {
  return walk(appDir).map((file) => {
    const rel = relative(appDir, file).split(sep);
    const kind = rel.at(-1) === "route.ts" ? "api" : "page";
    const segs = rel.slice(0, -1).filter((s) => !/^\(.*\)$/.test(s));
    const template = `/${segs.join("/")}`;
    const methods = kind === "api" ? exportedMethods(readFileSync(file, "utf8")) : ["GET"];
    return { template, methods, kind };
  });
}

const METHOD = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/;

/**
 * The HTTP methods a route.ts exports, in each form Next.js accepts: `export (async) function GET`,
 * `export const GET = …` and a destructured `export const { GET, PUT } = …`.
 */
export function exportedMethods(src: string): string[] {
  const names = [
    ...[...src.matchAll(/export\s+(?:async\s+)?function\s+(\w+)/g)].map((m) => m[1]!),
    ...[...src.matchAll(/export\s+const\s+(\w+)\s*=/g)].map((m) => m[1]!),
    ...[...src.matchAll(/export\s+const\s*\{([^}]*)\}\s*=/g)].flatMap((m) =>
      m[1]!.split(",").map((n) =>
        n
          .trim()
          .split(/\s*:\s*/)
          .at(-1)!,
      ),
    ),
  ];
  return [...new Set(names.filter((n) => METHOD.test(n)))];
}

// --- values ----------------------------------------------------------------------------------

const KNOWN_PARAMS = [
  "prefix",
  "cursor",
  "count",
  "uuid",
  "metric",
  "service",
  "handler",
  "range",
  "step",
  "refresh",
  "mode",
  "from",
  "to",
  "limit",
  "q",
  "query",
  "key",
  "match",
  "pattern",
  "theme",
];
const PLAUSIBLE = [
  "notification",
  "on-review-created",
  "notification:dedup:on-review-created",
  "1h",
  "5m",
  "7d",
  "duplicate_rate",
  "check_p99",
  "100",
  "1",
  "0",
  "true",
  "exact",
  "estimate",
  "01JD8X3Q5Y2K8N3B7Z6C4F9H1M",
  "dedup-outside",
  "retry-on-error",
];
const GLOB = [
  "*",
  "**",
  "?",
  "[a-z]",
  "[^a]",
  "\\*",
  "*:*",
  "notification:*",
  "*:dedup:*",
  "[",
  "]",
  "{a,b}",
  "*\\",
  "notification:dedup:*:*",
  "h[1]",
];
const CONTROL = ["\u0000", "\n", "\r\n", "\u001b[31m", "\u007f", "\t", "\u0008", "a\u0000b"];
const UNICODE = [
  "é",
  "日本語",
  "👩‍👩‍👧‍👦",
  "\u202e",
  "\u0301\u0301\u0301",
  "\ufeff",
  "ß",
  "İ",
  "\ud800",
  "\udfff",
  "𝕏".repeat(50),
  "\u2028",
];
const NUMBERS = [
  "-1",
  "-0",
  "0",
  "1e309",
  "-1e309",
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "1.5",
  "9999999999999999999999",
  "2147483648",
  "-2147483649",
  "9007199254740993",
  "1e-400",
  "01",
  "+1",
  " 1",
  "1 ",
  "٣",
  "1_000",
];
const TRAVERSAL = [
  "../../../../etc/passwd",
  "..%2f..%2f..%2fetc%2fpasswd",
  "%2e%2e/%2e%2e/etc/passwd",
  "..\\..\\windows\\win.ini",
  "/etc/passwd",
  "....//....//etc/passwd",
  "%252e%252e%252f",
  "file:///etc/passwd",
  ".next/server",
  "..;/",
];
const INJECTION = [
  "\r\nFLUSHALL\r\n",
  "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\ny\r\n",
  "KEYS *",
  "FLUSHALL",
  "CONFIG SET dir /tmp",
  "EVAL \"return redis.call('flushall')\" 0",
  "') or 1=1 --",
  "up) or vector(1",
  "sum(rate(x[5m])) by (le)",
  '"} or up{job=~".*"',
  '{__name__=~".+"}',
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
];
const WRONG_TYPES = ["[]", "{}", "null", "undefined", "true", "false", '{"a":1}', "[1,2,3]", "", " "];

function longString(): string {
  return pick(["a", "*", "%", ":", "é", "\u0000", "../"]).repeat(pick([256, 1025, 4097, 8193, 20_000]));
}

function adversarialValue(): string {
  const k = rand();
  if (k < 0.12) return pick(GLOB) + (chance(0.5) ? pick(PLAUSIBLE) : "");
  if (k < 0.2) return pick(CONTROL) + (chance(0.5) ? pick(PLAUSIBLE) : "");
  if (k < 0.3) return pick(UNICODE);
  if (k < 0.42) return pick(NUMBERS);
  if (k < 0.5) return pick(TRAVERSAL);
  if (k < 0.6) return pick(INJECTION);
  if (k < 0.68) return pick(WRONG_TYPES);
  if (k < 0.74) return longString();
  if (k < 0.8) return `${pick(PLAUSIBLE)}${pick(GLOB)}${pick(PLAUSIBLE)}`;
  return pick(PLAUSIBLE);
}

/** Percent-encodes a value, sometimes raw-ish (lone surrogates and %-sequences kept broken). */
function enc(v: string): string {
  if (chance(0.05))
    return v
      .replace(/[ #&?\n\r\u0000]/g, (c) => encodeURIComponent(c))
      .replace(/%(?![0-9A-F]{2})/gi, pick(["%", "%25"]));
  try {
    return encodeURIComponent(v);
  } catch {
    return v.replace(/[\ud800-\udfff]/g, pick(["%ED%A0%80", "%ZZ", "%"]));
  }
}

function fillPath(template: string): string {
  return template
    .split("/")
    .map((seg) => {
      if (!/^\[.*\]$/.test(seg)) return seg;
      if (chance(0.3)) return enc(pick(PLAUSIBLE));
      return enc(adversarialValue());
    })
    .join("/");
}

function query(): string {
  const n = Math.floor(rand() * 6);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = chance(0.75)
      ? pick(KNOWN_PARAMS)
      : chance(0.5)
        ? adversarialValue().slice(0, 64)
        : `unknown_${Math.floor(rand() * 1000)}`;
    parts.push(`${enc(name)}=${enc(adversarialValue())}`);
    if (chance(0.1)) parts.push(`${enc(name)}=${enc(adversarialValue())}`); // repeated
    if (chance(0.05)) parts.push(`${enc(name)}[]=${enc(adversarialValue())}`); // array style
  }
  if (chance(0.05)) parts.push("&&=&");
  return parts.length ? `?${parts.join("&")}` : "";
}

function body(): { body?: string; contentType?: string } {
  const k = rand();
  const ct = chance(0.85)
    ? "application/json"
    : pick([
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=utf-16",
        "",
      ]);
  if (k < 0.1) return { contentType: ct };
  if (k < 0.2) return { body: "{not json", contentType: ct };
  if (k < 0.25) return { body: "[".repeat(5000) + "]".repeat(5000), contentType: ct };
  if (k < 0.3) return { body: JSON.stringify({ a: "x".repeat(1_500_000) }), contentType: ct };
  if (k < 0.38)
    return { body: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}', contentType: ct };
  const fields = [
    "latencyMs",
    "errorRate",
    "redisCutoffMs",
    "traffic",
    "retryOnError",
    "rebalance",
    "forwarderRepublish",
    "restartBeforeCommit",
    "enabled",
    "rate",
    "ratePerSec",
    "replicas",
    "periodMs",
    "delayMs",
    "name",
    "unknown",
  ];
  const obj: Record<string, unknown> = {};
  for (let i = 0, n = Math.floor(rand() * 4); i < n; i++) {
    const f = pick(fields);
    const v = rand();
    // Small, short-lived values mostly: the fuzz must not cut the app's Redis for minutes.
    obj[f] =
      v < 0.2
        ? Number(pick(NUMBERS))
        : v < 0.35
          ? adversarialValue()
          : v < 0.5
            ? {
                enabled: chance(0.5),
                rate: rand(),
                ratePerSec: Math.floor(rand() * 10),
                periodMs: 2000 + Math.floor(rand() * 1000),
              }
            : v < 0.6
              ? [1, "a", null]
              : v < 0.7
                ? null
                : Math.floor(rand() * 50);
  }
  if ("redisCutoffMs" in obj) obj.redisCutoffMs = chance(0.5) ? 0 : obj.redisCutoffMs;
  return { body: JSON.stringify(obj), contentType: ct };
}

/** Whether every segment of `path` percent-decodes. */
export function decodable(path: string): boolean {
  try {
    for (const seg of path.split("/")) decodeURIComponent(seg);
    return true;
  } catch {
    return false;
  }
}

// --- run ------------------------------------------------------------------------------------

/** RSS in kB of `pid` and its children (from /proc). */
function rssKb(pid: number): number | null {
  try {
    const own = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    let kids = 0;
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      let children = "";
      try {
        children = readFileSync(`/proc/${pid}/task/${t}/children`, "utf8");
      } catch {
        continue;
      }
      for (const c of children.split(/\s+/).filter(Boolean)) kids += rssKb(Number(c)) ?? 0;
    }
    return own + kids;
  } catch {
    return null;
  }
}

/** What a run found. */
export interface FuzzReport {
  seed: number;
  requests: number;
  seconds: number;
  byStatus: Record<string, number>;
  byRoute: Record<string, number>;
  /** Each 5xx with the request's headers and the status of the same request sent again at once (a one-off or not). */
  serverErrors: Array<{
    method: string;
    url: string;
    headers: Record<string, string>;
    status: number;
    body: string;
    malformedPath: boolean;
    again: number | string;
  }>;
  /** 5xx answers to a path with an undecodable %-sequence (Next.js decodes dynamic segments itself). */
  serverErrorsMalformedPath: number;
  /** Every other 5xx answer. */
  serverErrorsOther: number;
  leaks: Array<{ method: string; url: string; found: string }>;
  noAnswer: Array<{ method: string; url: string; error: string }>;
  rssKb: { start: number | null; max: number | null; end: number | null };
  /** RSS (kB) after every tenth of the requests: growth that levels off is a cache, growth that does not is a leak. */
  rssTimelineKb: Array<number | null>;
  serverAlive: boolean;
  ok: boolean;
}

async function main(): Promise<void> {
  const routes = discoverRoutes();
  const rep: FuzzReport = {
    seed: SEED,
    requests: 0,
    seconds: 0,
    byStatus: {},
    byRoute: {},
    serverErrors: [],
    serverErrorsMalformedPath: 0,
    serverErrorsOther: 0,
    leaks: [],
    noAnswer: [],
    rssKb: { start: null, max: null, end: null },
    rssTimelineKb: [],
    serverAlive: true,
    ok: false,
  };
  if (PID) rep.rssKb.start = rep.rssKb.max = rssKb(PID);
  const t0 = Date.now();
  let next = 0;
  const other = ["DELETE", "PATCH", "POST", "PUT", "OPTIONS", "HEAD"];
  const sampler = PID
    ? setInterval(() => {
        const r = rssKb(PID);
        if (r === null) rep.serverAlive = false;
        else rep.rssKb.max = Math.max(rep.rssKb.max ?? 0, r);
      }, 250)
    : null;

  async function one(): Promise<void> {
    const route = pick(routes);
    const method = chance(0.15) ? pick(other) : pick(route.methods.length ? route.methods : ["GET"]);
    let path = fillPath(route.template);
    if (chance(0.05)) path += `/${enc(pick(TRAVERSAL))}`;
    const url = `${BASE}${path}${query()}`;
    const headers: Record<string, string> = {};
    let payload: string | undefined;
    if (method === "POST" || method === "PUT" || method === "PATCH") {
      const b = body();
      payload = b.body;
      if (b.contentType) headers["content-type"] = b.contentType;
    }
    if (chance(0.05))
      headers.accept = pick(["text/x-component", "*/*", "application/json", "\u0000"]).replace(/\u0000/g, "");
    if (chance(0.03)) headers.rsc = "1";
    const key = `${method} ${route.template}`;
    rep.byRoute[key] = (rep.byRoute[key] ?? 0) + 1;
    try {
      const res = await fetch(url, {
        method,
        headers,
        body: payload,
        redirect: "manual",
        signal: AbortSignal.timeout(15_000),
      });
      const text = method === "HEAD" ? "" : await res.text();
      rep.byStatus[res.status] = (rep.byStatus[res.status] ?? 0) + 1;
      if (res.status >= 500) {
        const malformedPath = !decodable(path);
        if (malformedPath) rep.serverErrorsMalformedPath++;
        else rep.serverErrorsOther++;
        if (rep.serverErrors.length < 200) {
          const again = await fetch(url, {
            method,
            headers,
            body: payload,
            redirect: "manual",
            signal: AbortSignal.timeout(15_000),
          }).then(
            (r) => r.status,
            (e: Error) => e.message,
          );
          rep.serverErrors.push({
            method,
            url: url.slice(0, 300),
            headers,
            status: res.status,
            body: text.slice(0, 300),
            malformedPath,
            again,
          });
        }
      }
      for (const f of FORBIDDEN)
        if (text.includes(f) && rep.leaks.length < 50) rep.leaks.push({ method, url: url.slice(0, 300), found: f });
    } catch (e) {
      const msg = (e as Error).message;
      // fetch itself refuses some URLs (invalid characters): not a server answer, not counted.
      if (e instanceof TypeError && /Invalid URL|invalid|Failed to parse/i.test(msg) && !/fetch failed/i.test(msg)) {
        rep.byStatus.client_rejected = (rep.byStatus.client_rejected ?? 0) + 1;
        return;
      }
      const code = (e as { cause?: { code?: string } }).cause?.code ?? "";
      // The server answered with headers larger than undici accepts (a redirect echoing a huge URL).
      if (code === "UND_ERR_HEADERS_OVERFLOW") {
        rep.byStatus.headers_overflow = (rep.byStatus.headers_overflow ?? 0) + 1;
        return;
      }
      // A body above the app's limit is refused by its Content-Length (413) without being read; the
      // server may then close the connection while the client is still sending (RFC 9110 §15.5.14),
      // which the client sees as a reset. Counted apart, not as "no answer".
      if (
        (code === "ECONNRESET" || code === "EPIPE") &&
        payload !== undefined &&
        Buffer.byteLength(payload) > BODY_LIMIT_BYTES
      ) {
        rep.byStatus.refused_by_close = (rep.byStatus.refused_by_close ?? 0) + 1;
        return;
      }
      rep.byStatus.no_answer = (rep.byStatus.no_answer ?? 0) + 1;
      if (rep.noAnswer.length < 50) rep.noAnswer.push({ method, url: url.slice(0, 300), error: `${msg} ${code}` });
    }
  }

  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next++;
        await one();
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
  if (sampler) clearInterval(sampler);
  rep.seconds = (Date.now() - t0) / 1000;
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
  const fivexx = Object.entries(rep.byStatus)
    .filter(([s]) => /^5/.test(s))
    .reduce((a, [, n]) => a + n, 0);
  console.log(
    `[fuzz-api] seed ${SEED}: ${rep.requests} requests over ${routes.length} routes in ${rep.seconds.toFixed(1)} s (${(rep.requests / rep.seconds).toFixed(0)}/s); ` +
      `status ${Object.entries(rep.byStatus)
        .map(([s, n]) => `${s}:${n}`)
        .join(
          " ",
        )}; 5xx ${fivexx} (${rep.serverErrorsMalformedPath} on an undecodable path); leaks ${rep.leaks.length}; no answer ${rep.noAnswer.length}; ` +
      `RSS ${rep.rssKb.start !== null ? `${(rep.rssKb.start / 1024).toFixed(0)} → max ${((rep.rssKb.max ?? 0) / 1024).toFixed(0)} → end ${((rep.rssKb.end ?? 0) / 1024).toFixed(0)} MB` : "not sampled"}; server ${rep.serverAlive ? "up" : "DOWN"}`,
  );
  for (const e of [
    ...rep.serverErrors.filter((x) => !x.malformedPath).slice(0, 5),
    ...rep.serverErrors.filter((x) => x.malformedPath).slice(0, 2),
  ])
    console.log(
      `[fuzz-api] ${e.status} ${e.method} ${e.url} headers ${JSON.stringify(e.headers)} → ${e.body} (sent again: ${e.again})`,
    );
  for (const e of rep.leaks.slice(0, 5)) console.log(`[fuzz-api] LEAK ${e.method} ${e.url} contains ${e.found}`);
  for (const e of rep.noAnswer.slice(0, 5)) console.log(`[fuzz-api] NO ANSWER ${e.method} ${e.url}: ${e.error}`);
  if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(rep, null, 2));
  process.exit(rep.ok ? 0 : 1);
}

if (require.main === module) {
  void main().catch((e: unknown) => {
    console.error(`[fuzz-api] ${(e as Error)?.stack ?? e}`);
    process.exit(2);
  });
}
