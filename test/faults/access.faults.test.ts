/**
 * Access.
 * - The state-changing endpoints (PUT /api/demo/sources, PUT /api/demo/faults,
 *   POST /api/workshop/scenarios/{name}/runs, POST /api/silences, DELETE /api/silences/{id}) follow server/access.ts both ways: with
 *   WORKSHOP_TOKEN set a bearer token is required from anywhere; without it, real mode accepts only
 *   loopback requests (Host, X-Forwarded-For, X-Forwarded-Host, Origin, Sec-Fetch-Site), and so
 *   does embedded mode; a Host that is not on the allow-list is refused first. X-Real-IP / Forwarded / a forwarded chain make a request
 *   non-local unless TRUSTED_PROXIES lists the proxy; an app bound beyond loopback without a token is
 *   read-only; cross-site callers and non-JSON bodies are refused in every mode.
 * - The key browser has no write path: every non-GET method on /api/keys* is 405, and what the
 *   app sends to Redis while browsing (MONITOR on the suite's redis-server, scripts included) is
 *   read-only.
 * - No request input reaches Redis as a command or Prometheus as PromQL: representative attempts,
 *   checked against what the servers received.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type App } from "@/e2e/harness";
import { PROMQL } from "@/lib/named-queries";
import { networkInterfaces } from "node:os";
import { faultAppPerSuite } from "./lib/app";
import { freePort, ROOT, sleep, startProc, type Proc } from "./lib/procs";
import { FaultRedis } from "./lib/redis";
import { monitor } from "./lib/monitor";

/** This machine's first non-loopback IPv4 address, if it has one. */
function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return undefined;
}

/** One state-changing call per endpoint, harmless when let through (empty patch, unknown scenario). */
const CALLS = [
  { method: "PUT", path: "/api/demo/sources", body: "{}" },
  { method: "PUT", path: "/api/demo/faults", body: "{}" },
  { method: "POST", path: "/api/workshop/scenarios/no-such-scenario/runs", body: undefined },
  // Silences: an empty body (400 when let through) and a malformed id (400): no Alertmanager is touched.
  { method: "POST", path: "/api/silences", body: "{}" },
  { method: "DELETE", path: "/api/silences/not-a-silence-id", body: undefined },
] as const;

const TOKEN = "faults-token-0123456789abcdef";

/** Status of each call with `headers`, via node:http so Host can be set freely. */
async function statuses(app: Pick<App, "url">, headers: Record<string, string>): Promise<number[]> {
  const { request } = await import("node:http");
  const u = new URL(app.url);
  return Promise.all(
    CALLS.map(
      (c) =>
        new Promise<number>((resolve, reject) => {
          const req = request(
            {
              host: u.hostname,
              port: u.port,
              path: c.path,
              method: c.method,
              headers: { "content-type": "application/json", ...headers },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on("error", reject);
          req.end(c.body);
        }),
    ),
  );
}

const allowed = (s: number[]) => s.every((x) => x !== 401 && x !== 403 && x < 500);
const forbidden = (s: number[]) => s.every((x) => x === 403);
const unauthorized = (s: number[]) => s.every((x) => x === 401);

describe("case 7: access", () => {
  describe("real mode, WORKSHOP_TOKEN unset: loopback only", () => {
    const fa = faultAppPerSuite();

    it("a request from this machine with a loopback Host is let through", async () => {
      const port = new URL(fa().app.url).port;
      expect(await statuses(fa().app, { host: `127.0.0.1:${port}` })).toSatisfy(allowed);
      expect(await statuses(fa().app, { host: `localhost:${port}` })).toSatisfy(allowed);
      expect(
        await statuses(fa().app, {
          host: `localhost:${port}`,
          origin: `http://localhost:${port}`,
          "sec-fetch-site": "same-origin",
        }),
      ).toSatisfy(allowed);
    });

    it.each([
      ["a foreign Host (DNS rebinding)", { host: "evil.example.com" }],
      ["a foreign Host with a port", { host: "192.168.1.20:3000" }],
      ["X-Forwarded-For of another machine", { "x-forwarded-for": "203.0.113.7" }],
      ["a proxy chain ending in another machine", { "x-forwarded-for": "127.0.0.1, 203.0.113.7" }],
      ["X-Forwarded-Host of another host", { "x-forwarded-host": "evil.example.com" }],
      ["a cross-site Origin", { origin: "http://evil.example.com" }],
      ["Origin null", { origin: "null" }],
      ["Sec-Fetch-Site cross-site", { "sec-fetch-site": "cross-site" }],
      ["a bearer token nobody configured", { host: "evil.example.com", authorization: `Bearer ${TOKEN}` }],
      // Any forwarding header makes a request non-local (no TRUSTED_PROXIES here).
      ["X-Real-IP claiming loopback", { "x-real-ip": "127.0.0.1" }],
      ["X-Real-IP of another machine", { "x-real-ip": "203.0.113.7" }],
      ["Forwarded claiming loopback", { forwarded: "for=127.0.0.1" }],
      ["Forwarded of another machine", { forwarded: 'for="[2001:db8::7]:4711";proto=http' }],
      ["an X-Forwarded-For chain of loopbacks (a proxy hop)", { "x-forwarded-for": "127.0.0.1, ::1" }],
      [
        "X-Forwarded-For loopback with X-Real-IP loopback",
        { "x-forwarded-for": "127.0.0.1", "x-real-ip": "127.0.0.1" },
      ],
      ["X-Forwarded-Host another port of localhost", { host: "localhost:1", "x-forwarded-host": "localhost:2" }],
      ["Sec-Fetch-Site same-site (another port's page)", { "sec-fetch-site": "same-site" }],
      ["an Origin on another port of localhost", { origin: "http://localhost:1" }],
    ])("is refused (403) with %s", async (_what, headers) => {
      const h: Record<string, string> = { host: `127.0.0.1:${new URL(fa().app.url).port}`, ...headers };
      expect(await statuses(fa().app, h)).toSatisfy(forbidden);
    });
  });

  // A request that really arrives from another address: the app listening on this machine's
  // external interface too, called through it (the harness binds 127.0.0.1 only).
  const ext = externalIPv4();
  describe.skipIf(!ext)(`real mode, WORKSHOP_TOKEN unset, a request from a non-loopback address (${ext})`, () => {
    let redis: FaultRedis;
    let app: Proc;
    let url = "";
    beforeAll(async () => {
      redis = await FaultRedis.start("access-ext");
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_ENV: "production",
        PORT: String(port),
        REDIS_URL: redis.url,
        DEMO: "off",
      };
      for (const k of ["KAFKA_BROKERS", "PROMETHEUS_URL", "DATABASE_URL", "WORKSHOP_TOKEN", "REDIS_CLUSTER_NODES"])
        delete env[k];
      app = startProc(
        `app-ext-${port}`,
        join(ROOT, "node_modules", ".bin", "next"),
        ["start", "-p", String(port), "-H", "0.0.0.0"],
        { env },
      );
      url = `http://${ext}:${port}`;
      for (let i = 0; i < 200; i++) {
        if (!app.alive()) throw new Error(`the app exited:\n${app.logs()}`);
        if (
          await fetch(`${url}/api/health`).then(
            (r) => r.ok,
            () => false,
          )
        )
          return;
        await sleep(300);
      }
      throw new Error(`the app on ${url} did not answer:\n${app.logs()}`);
    });
    afterAll(async () => {
      await app?.stop();
      await redis?.close();
    });

    it("is refused (403), also with a loopback Host header", async () => {
      expect(await statuses({ url }, {})).toSatisfy(forbidden);
      expect(await statuses({ url }, { host: "localhost" })).toSatisfy(forbidden);
      expect(
        await statuses(
          { url },
          { host: "127.0.0.1:3000", origin: "http://localhost:3000", "sec-fetch-site": "same-origin" },
        ),
      ).toSatisfy(forbidden);
    });

    it("is refused with Host localhost and X-Forwarded-For 127.0.0.1 (the reported bypass), or X-Real-IP / Forwarded loopback; start-up says read-only", async () => {
      expect(await statuses({ url }, { host: "localhost", "x-forwarded-for": "127.0.0.1" })).toSatisfy(forbidden);
      expect(
        await statuses(
          { url },
          { host: "localhost:3000", "x-forwarded-for": "::1", "x-forwarded-host": "localhost:3000" },
        ),
      ).toSatisfy(forbidden);
      expect(await statuses({ url }, { host: "localhost", "x-real-ip": "127.0.0.1" })).toSatisfy(forbidden);
      expect(await statuses({ url }, { host: "localhost", forwarded: "for=127.0.0.1" })).toSatisfy(forbidden);
      expect(app.logs()).toMatch(/\[dedup-health\] access: read-only: listening on 0\.0\.0\.0/);
    });
  });

  describe("real mode, TRUSTED_PROXIES=127.0.0.1 (a proxy on this machine): its report of the client decides", () => {
    const fa = faultAppPerSuite({ TRUSTED_PROXIES: "127.0.0.1" });

    it("lets a client the proxy reports as local through, refuses one it reports as remote", async () => {
      const host = `127.0.0.1:${new URL(fa().app.url).port}`;
      expect(await statuses(fa().app, { host, "x-forwarded-for": "127.0.0.1" })).toSatisfy(allowed);
      expect(await statuses(fa().app, { host, "x-forwarded-for": "203.0.113.7" })).toSatisfy(forbidden);
      expect(await statuses(fa().app, { host, "x-forwarded-for": "203.0.113.7, 127.0.0.1" })).toSatisfy(forbidden);
      expect(await statuses(fa().app, { host, "x-real-ip": "198.51.100.4" })).toSatisfy(forbidden);
      expect(await statuses(fa().app, { host, forwarded: "for=198.51.100.4" })).toSatisfy(forbidden);
    });
  });

  describe("real mode, WORKSHOP_TOKEN set: the token, from anywhere", () => {
    const fa = faultAppPerSuite({ WORKSHOP_TOKEN: TOKEN });

    it("refuses local requests without the token or with a wrong one (401)", async () => {
      const host = `127.0.0.1:${new URL(fa().app.url).port}`;
      expect(await statuses(fa().app, { host })).toSatisfy(unauthorized);
      expect(await statuses(fa().app, { host, authorization: `Bearer ${TOKEN}x` })).toSatisfy(unauthorized);
      expect(await statuses(fa().app, { host, authorization: TOKEN })).toSatisfy(unauthorized);
      expect(
        await statuses(fa().app, { host, authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` }),
      ).toSatisfy(unauthorized);
      expect(await statuses(fa().app, { host, cookie: `token=${TOKEN}` })).toSatisfy(unauthorized);
    });

    it("accepts the token even from a foreign address; a foreign Host is refused before the token is looked at", async () => {
      const host = `127.0.0.1:${new URL(fa().app.url).port}`;
      expect(
        await statuses(fa().app, { host, "x-forwarded-for": "203.0.113.7", authorization: `Bearer ${TOKEN}` }),
      ).toSatisfy(allowed);
      expect(await statuses(fa().app, { host: "evil.example.com", authorization: `Bearer ${TOKEN}` })).toSatisfy(
        forbidden,
      );
    });
  });

  describe("embedded mode", () => {
    let open: App | undefined;
    let locked: App | undefined;
    beforeAll(async () => {
      [open, locked] = await Promise.all([
        startApp({ env: { DEMO: "off" } }),
        startApp({ env: { DEMO: "off", WORKSHOP_TOKEN: TOKEN } }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([open?.stop(), locked?.stop()]);
    });

    it("is open to this machine without a token (a one-process demo), not to a forwarded client, and needs the token once one is set", async () => {
      expect(await statuses(open!, {})).toSatisfy(allowed);
      expect(await statuses(open!, { "x-forwarded-for": "203.0.113.7" })).toSatisfy(forbidden);
      expect(await statuses(open!, { host: "evil.example.com" })).toSatisfy(forbidden);
      expect(await statuses(locked!, { host: `127.0.0.1:${new URL(locked!.url).port}` })).toSatisfy(unauthorized);
      expect(await statuses(locked!, { authorization: `Bearer ${TOKEN}` })).toSatisfy(allowed);
    });

    it("refuses cross-site callers (403) and non-JSON bodies (415) even though it is open", async () => {
      expect(await statuses(open!, { origin: "http://evil.example.com" })).toSatisfy(forbidden);
      expect(await statuses(open!, { "sec-fetch-site": "cross-site" })).toSatisfy(forbidden);
      // A body-less DELETE carries no body to type (no form can send a DELETE: cross-origin it is
      // always preflighted), so it meets its route: 400 for the malformed id, never 415.
      const typed = await statuses(open!, { "content-type": "application/x-www-form-urlencoded" });
      expect(typed.filter((_, i) => CALLS[i]!.method !== "DELETE")).toSatisfy((s: number[]) =>
        s.every((x) => x === 415),
      );
      expect(typed[CALLS.findIndex((c) => c.method === "DELETE")]).toBe(400);
      expect(
        await statuses(locked!, { origin: "http://evil.example.com", authorization: `Bearer ${TOKEN}` }),
      ).toSatisfy(forbidden);
    });
  });

  describe("key browser and upstream queries", () => {
    const fa = faultAppPerSuite();

    it("every non-GET method on /api/keys* is 405", async () => {
      for (const path of [
        "/api/keys?prefix=notification:dedup:on-review-created",
        "/api/keys/lookup?uuid=01JD8X3Q5Y2K8N3B7Z6C4F9H1M",
      ]) {
        for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
          const res = await fetch(`${fa().app.url}${path}`, {
            method,
            body: method === "DELETE" ? undefined : "{}",
            headers: { "content-type": "application/json" },
          });
          expect(res.status, `${method} ${path}`).toBe(405);
        }
      }
    });

    it("browsing sends only read-only commands to Redis, and request input never becomes a command", async () => {
      const mon = await monitor(fa().redis.port, fa().password);
      const seen = mon.seen;
      const attempts = [
        "notification:dedup:on-review-created",
        "notification:dedup:on-review-created\r\nFLUSHALL\r\n",
        "FLUSHALL",
        "notification:dedup:*",
        "*",
        "notification:dedup:h[1]",
        "notification:dedup:x\" ) redis.call('flushall') --",
        "*3\r\n$3\r\nDEL\r\n",
      ];
      for (const p of attempts) await fetch(`${fa().app.url}/api/keys?prefix=${encodeURIComponent(p)}&count=50`);
      for (const u of ["FLUSHALL", "01JD8X3Q5Y2K8N3B7Z6C4F9H1M", "x' or '1'='1"])
        await fetch(`${fa().app.url}/api/keys/lookup?uuid=${encodeURIComponent(u)}`);
      // A recount inside the window: asked for until one starts (one per 10 s for all callers; a
      // count already running refuses), then waited for (its script calls are paced).
      const handlers = async (q: string) =>
        (await (await fetch(`${fa().app.url}/api/handlers${q}`)).json()) as {
          refresh: { started: boolean };
          scan: { done: boolean };
        };
      await expect
        .poll(async () => (await handlers("?refresh=1&mode=exact")).refresh.started, { timeout: 20_000, interval: 500 })
        .toBe(true);
      await expect.poll(async () => (await handlers("")).scan.done, { timeout: 20_000, interval: 250 }).toBe(true);
      mon.stop();
      const READ_ONLY = new Set([
        "scan",
        "get",
        "getrange",
        "mget",
        "time",
        "pttl",
        "ttl",
        "type",
        "memory",
        "evalsha",
        "eval",
        "evalsha_ro",
        "eval_ro",
        "script",
        "ping",
        "info",
        "dbsize",
        "client",
        "hello",
        "select",
        "auth",
        "randomkey",
        "exists",
        "strlen",
        "object",
        "command",
        "slowlog",
        "readonly",
        "cluster",
      ]);
      const names = [...new Set(seen.map((a) => a[0]!.toLowerCase()))].sort();
      // The monitor saw the browsing itself (an empty stream would prove nothing).
      expect(names, `commands seen: ${names.join(", ")}`).toEqual(expect.arrayContaining(["scan", "evalsha"]));
      expect(
        names.filter((n) => !READ_ONLY.has(n)),
        `commands seen: ${names.join(", ")}`,
      ).toEqual([]);
      // Input is only ever an argument (the command names above are all the app's own), and input
      // with CR/LF or other control characters is refused before it reaches Redis.
      // (The script body of an EVAL is the app's own constant Lua, with its newlines: not input.)
      const inputArgs = (a: string[]) => a.filter((_, i) => !(i === 1 && /^eval(_ro)?$/i.test(a[0]!)));
      expect(
        seen.filter((a) => inputArgs(a).some((x) => /[\u0000-\u001f]/.test(x))).map((a) => a.join(" ").slice(0, 200)),
      ).toEqual([]);
      // SCAN patterns built from input are escaped: the literal `h[1]` prefix is matched literally.
      const patterns = seen
        .filter((a) => a[0]!.toLowerCase() === "scan")
        .flatMap((a) =>
          a.slice(
            a.findIndex((x) => x.toLowerCase() === "match") + 1,
            a.findIndex((x) => x.toLowerCase() === "match") + 2,
          ),
        );
      for (const p of patterns.filter((x) => x.includes("h"))) expect(p).not.toMatch(/h\[1\]/);
      const res = await fetch(
        `${fa().app.url}/api/keys?prefix=${encodeURIComponent("notification:dedup:h[1]")}&count=500`,
      ).then((r) => r.json() as Promise<{ keys?: Array<{ key: string }> }>);
      for (const k of res.keys ?? []) expect(k.key.startsWith("notification:dedup:h[1]:")).toBe(true);
    });

    it("request input never becomes PromQL: every query Prometheus received is a named query", async () => {
      const before = fa().prometheus.requests.length;
      const evil = [
        'x"} or vector(1) #',
        "up) or (vector(1)",
        "sum(rate(messages_processed_total[5m]))",
        '{__name__=~".+"}',
      ];
      for (const e of evil) {
        for (const p of ["service", "handler"])
          await fetch(`${fa().app.url}/api/series?metric=duplicate_ratio&range=1h&${p}=${encodeURIComponent(e)}`);
        await fetch(`${fa().app.url}/api/series?metric=${encodeURIComponent(e)}`);
        await fetch(`${fa().app.url}/api/overview?range=${encodeURIComponent(e)}`);
        await fetch(`${fa().app.url}/api/alerts?query=${encodeURIComponent(e)}`);
      }
      const sent = fa().prometheus.requests.slice(before);
      const named = new Set(Object.values(PROMQL));
      expect(sent.length).toBeGreaterThan(0);
      expect(
        sent.filter((q) => q.params.query !== undefined && !named.has(q.params.query)).map((q) => q.params.query),
      ).toEqual([]);
      for (const q of sent) for (const v of Object.values(q.params)) for (const e of evil) expect(v).not.toContain(e);
    });

    it("review: the dashboard's Redis scripts are read-only except the key actions (UNLINK, PEXPIRE), and PromQL is a constant table", () => {
      const files: string[] = [];
      const walk = (d: string) => {
        for (const n of readdirSync(d)) {
          const p = join(d, n);
          if (statSync(p).isDirectory()) walk(p);
          else if (/\.ts$/.test(n) && !/\.test\.ts$/.test(n)) files.push(p);
        }
      };
      walk(join(ROOT, "server", "observe"));
      // The one writing file: the forget / TTL scripts (compare, then UNLINK or PEXPIRE), run by the key actions behind the write access rules and recorded in the audit trail.
      const KEY_ACTIONS = join(ROOT, "server", "observe", "keys", "action-keys.ts");
      const calls = new Set<string>();
      const actionCalls = new Set<string>();
      for (const f of files) {
        for (const m of readFileSync(f, "utf8").matchAll(/redis\.p?call\(\s*['"]([A-Za-z]+)['"]/g))
          (f === KEY_ACTIONS ? actionCalls : calls).add(m[1]!.toUpperCase());
      }
      const WRITES = [
        "SET",
        "DEL",
        "UNLINK",
        "EXPIRE",
        "PEXPIRE",
        "FLUSHALL",
        "FLUSHDB",
        "CONFIG",
        "RENAME",
        "SETEX",
        "PSETEX",
        "GETDEL",
        "GETEX",
        "HSET",
        "LPUSH",
        "RPUSH",
        "SADD",
        "ZADD",
        "INCR",
        "DECR",
        "APPEND",
        "COPY",
        "RESTORE",
        "MIGRATE",
        "MOVE",
        "PERSIST",
        "SWAPDB",
      ];
      expect([...calls].filter((c) => WRITES.includes(c))).toEqual([]);
      expect([...actionCalls].filter((c) => WRITES.includes(c)).sort()).toEqual(["PEXPIRE", "UNLINK"]);
      // PromQL: only ever PROMQL[<QueryName>] from a constant table.
      const prom = readFileSync(join(ROOT, "server", "observe", "metrics", "prometheus.ts"), "utf8");
      const queries = [...prom.matchAll(/\.get<[^(]*\(\s*"\/api\/v1\/query[a-z_]*",\s*\{\s*query:\s*([^,}\n]+)/g)].map(
        (m) => m[1]!.trim(),
      );
      expect(queries.length).toBeGreaterThanOrEqual(2);
      for (const q of queries) expect(q).toBe("PROMQL[q]");
    });
  });
});
