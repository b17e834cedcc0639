/**
 * The app's boundaries over HTTP against `next start`, in embedded mode (no token): which Host
 * names it answers to (DNS rebinding), who may change state when it is bound to loopback or beyond,
 * what it reads of a body sent to a page, and what an unknown API
 * path answers (two embedded apps, started together: one bound to 127.0.0.1, one to 0.0.0.0, what the
 * Docker image does); and, in real mode, what a caller of the key counts can make Redis do.
 */
import { readdirSync, statSync } from "node:fs";
import { hostname, networkInterfaces } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScanProgress } from "@/lib/api/handlers";
import { median, percentile } from "@/scripts/lib/stats";
import { slowClient } from "@/server/testing/slow-client";
import { FaultRedis } from "@/test/faults/lib/redis";
import { launchBrowser, ROOT, startApp, type App } from "./harness";
import { concurrentBodies, consumerGroups, raw, rssMb } from "./security-probes";

const RUN = "/api/workshop/scenarios/retry-on-error/runs";
const JSON_TYPE = { "content-type": "application/json" };

/** This machine's first non-loopback IPv4 address, if it has one. */
function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return undefined;
}

/** One built static chunk's URL path. */
function staticChunk(): string {
  const base = join(ROOT, ".next", "static");
  const walk = (d: string): string | undefined => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      const hit = statSync(p).isDirectory() ? walk(p) : p.endsWith(".js") ? p : undefined;
      if (hit) return hit;
    }
    return undefined;
  };
  return `/_next/static/${relative(base, walk(base)!).split("\\").join("/")}`;
}

let lo: App;
let wide: App;
beforeAll(async () => {
  [lo, wide] = await Promise.all([
    startApp({ env: { DEMO: "off" } }),
    startApp({ env: { DEMO: "off" }, host: "0.0.0.0" }),
  ]);
}, 90_000);
afterAll(async () => {
  await Promise.all([lo?.stop(), wide?.stop()]);
});

describe("Host allow-list: a DNS-rebinding page reads and changes nothing", () => {
  it("every page, API route and static file answers 403 to a foreign Host, GET included; loopback names are served", async () => {
    const port = new URL(lo.url).port;
    const paths = [
      "/",
      "/handlers/notification/on-review-created",
      "/alerts",
      "/api/keys?prefix=notification:dedup:on-review-created",
      "/api/keys/lookup?uuid=01JD8X3Q5Y2K8N3B7Z6C4F9H1M",
      "/api/consumers",
      "/api/metrics",
      "/api/health",
      "/api/overview",
      staticChunk(),
    ];
    for (const path of paths) {
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
        expect((await raw(lo.url, { path, headers: { host } })).status, `${host} ${path}`).not.toBe(403);
      }
      const r = await raw(lo.url, { path, headers: { host: `evil.example:${port}` } });
      expect(r.status, `evil.example ${path}`).toBe(403);
      if (path.startsWith("/api/")) {
        expect(JSON.parse(r.text), path).toMatchObject({
          error: "forbidden",
          detail: expect.stringMatching(/ALLOWED_HOSTS/),
        });
      } else {
        expect(r.headers["content-type"], path).toMatch(/text\/html/);
        expect(r.text, path).not.toMatch(/<script|notification/);
      }
    }
    // A sub-domain trick and no port change nothing.
    expect((await raw(lo.url, { path: "/api/metrics", headers: { host: "localhost.evil.example" } })).status).toBe(403);
    expect((await raw(lo.url, { path: "/api/metrics", headers: { host: "127.0.0.1.nip.io" } })).status).toBe(403);
  });

  it("the rebinding page's writes are refused too (its Origin equals its Host, so the same-site rule alone let them through)", async () => {
    const evil = `evil.example:${new URL(lo.url).port}`;
    const headers = { ...JSON_TYPE, host: evil, origin: `http://${evil}`, "sec-fetch-site": "same-origin" };
    const run = await raw(lo.url, { method: "POST", path: RUN, headers });
    expect(run.status).toBe(403);
    expect(JSON.parse(run.text)).toMatchObject({ error: "forbidden" });
    expect(
      (
        await raw(lo.url, {
          method: "PUT",
          path: "/api/demo/faults",
          headers,
          body: JSON.stringify({ redisLatencyMs: 50 }),
        })
      ).status,
    ).toBe(403);
    expect((await raw(lo.url, { method: "PUT", path: "/api/demo/sources", headers, body: "{}" })).status).toBe(403);
  });
});

describe("embedded mode follows the locality rule of real mode", () => {
  it("bound to loopback: a request a proxy forwarded for another client is read-only; the machine's own is not", async () => {
    const host = new URL(lo.url).host;
    const forwarded: Array<Record<string, string>> = [
      { "x-forwarded-for": "203.0.113.9" },
      { forwarded: "for=203.0.113.9" },
      { "x-real-ip": "203.0.113.9" },
    ];
    for (const fwd of forwarded) {
      const r = await raw(lo.url, { method: "POST", path: RUN, headers: { ...JSON_TYPE, host, ...fwd } });
      expect(r.status, JSON.stringify(fwd)).toBe(403);
      expect(
        (
          await raw(lo.url, {
            method: "PUT",
            path: "/api/demo/faults",
            headers: { ...JSON_TYPE, host, ...fwd },
            body: "{}",
          })
        ).status,
        JSON.stringify(fwd),
      ).toBe(403);
    }
    expect(
      (
        await raw(lo.url, {
          method: "POST",
          path: RUN,
          headers: { ...JSON_TYPE, host, origin: lo.url, "sec-fetch-site": "same-origin" },
        })
      ).status,
    ).toBe(202);
    expect(lo.logs()).toMatch(
      /\[dedup-health\] access: embedded mode: state-changing endpoints are open to requests from this machine only/,
    );
  });

  const ext = externalIPv4();
  it("bound to 0.0.0.0 without WORKSHOP_TOKEN: read-only from everywhere, says so at start-up; this machine's names and addresses are served", async () => {
    const port = new URL(wide.url).port;
    const calls = [
      { method: "POST", path: RUN, body: undefined },
      { method: "PUT", path: "/api/demo/faults", body: "{}" },
      { method: "PUT", path: "/api/demo/sources", body: JSON.stringify({ rate: 5000 }) },
    ];
    const bases = [wide.url, ...(ext ? [`http://${ext}:${port}`] : [])];
    for (const base of bases) {
      const host = new URL(base).host;
      for (const c of calls) {
        const r = await raw(base, {
          method: c.method,
          path: c.path,
          headers: { ...JSON_TYPE, host, origin: base, "sec-fetch-site": "same-origin" },
          body: c.body,
        });
        expect(r.status, `${c.method} ${c.path} via ${host}`).toBe(403);
        expect(JSON.parse(r.text).detail, c.path).toMatch(/read-only/);
      }
      expect((await raw(base, { path: "/", headers: { host } })).status, `GET / via ${host}`).toBe(200);
    }
    expect((await raw(wide.url, { path: "/api/overview", headers: { host: `${hostname()}:${port}` } })).status).toBe(
      200,
    );
    expect((await raw(wide.url, { path: "/api/overview", headers: { host: `evil.example:${port}` } })).status).toBe(
      403,
    );
    expect(wide.logs()).toMatch(
      /\[dedup-health\] access: read-only: listening on 0\.0\.0\.0 beyond loopback without WORKSHOP_TOKEN \(embedded mode\)/,
    );
  });
});

describe("pages take no body; unknown API paths answer JSON", () => {
  it("50 concurrent 10 MB POSTs to / are refused (405) without the server buffering them", async () => {
    const body = Buffer.alloc(10 * 1024 * 1024, 120);
    const before = rssMb(lo.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(lo.pid))), 50);
    let statuses: number[];
    try {
      statuses = await concurrentBodies(lo.url, {
        n: 50,
        method: "POST",
        path: "/",
        body,
        headers: { "content-type": "text/plain" },
      });
    } finally {
      clearInterval(sampler);
    }
    console.log(
      `[boundaries] RSS ${before.toFixed(0)} MB before 50 x 10 MB POST /, peak ${peak.toFixed(0)} MB; answers ${JSON.stringify(statuses.reduce<Record<number, number>>((a, s) => ({ ...a, [s]: (a[s] ?? 0) + 1 }), {}))}`,
    );
    // The server may close a connection before all of its body is sent (-1); never a 200.
    expect(statuses.every((s) => s === 405 || s === -1)).toBe(true);
    expect(statuses).toContain(405);
    expect(peak - before).toBeLessThan(100);
    const one = await raw(lo.url, {
      method: "POST",
      path: "/alerts",
      headers: { host: new URL(lo.url).host, "content-type": "application/x-www-form-urlencoded" },
      body: "a=1",
    });
    expect(one.status).toBe(405);
    expect(one.headers.allow).toBe("GET, HEAD");
  }, 60_000);

  it("/handlers/%25zz/x and /handlers/%2525/x are 404 (a second decoding made them an error page and service `%`)", async () => {
    for (const path of ["/handlers/%25zz/x", "/handlers/%2525/x", "/handlers/notification/%2525"]) {
      const r = await fetch(`${lo.url}${path}`);
      expect(r.status, path).toBe(404);
      expect(r.headers.get("content-security-policy"), path).toMatch(/frame-ancestors/);
      expect(await r.text(), path).toContain("There is no page at this address");
    }
    const ok = await fetch(`${lo.url}/handlers/notification/on-review-created`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("<title>notification/on-review-created");
  });

  it("a not-found handler address is answered without a second connection: 200 of 200 concurrent ones are 404, on both binds", async () => {
    for (const app of [lo, wide]) {
      const paths = Array.from(
        { length: 200 },
        (_, i) => ["/handlers/%25zz/x", "/handlers/%2525/x", `/handlers/notification/%25${i}zz`][i % 3]!,
      );
      const statuses = await Promise.all(
        paths.map((p) =>
          fetch(`${app.url}${p}`).then(
            (r) => r.status,
            () => -1,
          ),
        ),
      );
      expect(
        statuses.filter((s) => s !== 404),
        app.url,
      ).toEqual([]);
    }
  });

  it("a client-router request whose router state is not a router state tree (empty, no JSON array, or an array of the wrong shape) is a 400 that says so, not the renderer's 500; the client router's own still renders", async () => {
    const wrongShapes = [[1, 2], [{}], ["", { children: 5 }], ["", {}, null, "bogus"], []].map((v) =>
      encodeURIComponent(JSON.stringify(v)),
    );
    for (const state of ["", "garbage", encodeURIComponent("{}"), encodeURIComponent('"x"'), ...wrongShapes]) {
      for (const path of ["/", "/nope", "/handlers/notification/on-review-created"]) {
        const r = await fetch(`${lo.url}${path}`, { headers: { RSC: "1", "Next-Router-State-Tree": state } });
        expect(r.status, `${path} ${state}`).toBe(400);
        expect(((await r.json()) as { detail: string }).detail).toMatch(/Next-Router-State-Tree/);
      }
    }
    const ok = await fetch(`${lo.url}/alerts`, {
      headers: {
        RSC: "1",
        "Next-Router-State-Tree": encodeURIComponent(
          JSON.stringify(["", { children: ["__PAGE__", {}] }, null, null, 0]),
        ),
      },
    });
    expect(ok.status).toBe(200);
    // A dynamic route's state, segments as [param, value, type, siblings], as Next's client sends it.
    const dynamic = [
      "",
      {
        children: [
          "handlers",
          {
            children: [
              ["service", "notification", "d", null],
              { children: [["handler", "on-review-created", "d", null], { children: ["__PAGE__", {}] }] },
            ],
          },
        ],
      },
      null,
      null,
      0,
    ];
    const deep = await fetch(`${lo.url}/handlers/notification/on-review-created`, {
      headers: { RSC: "1", "Next-Router-State-Tree": encodeURIComponent(JSON.stringify(dynamic)) },
    });
    expect(deep.status).toBe(200);
    expect((await fetch(`${lo.url}/alerts`)).status).toBe(200);
  });

  it("Chromium's client-router navigations (from a dynamic route's page, and back) pass the router-state check: every RSC request is a 200, no page is loaded anew", async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const rsc: Array<{ url: string; status: number; state: boolean }> = [];
      let documents = 0;
      page.on("request", (r) => void (r.resourceType() === "document" && documents++));
      page.on("response", (r) => {
        const h = r.request().headers();
        if (h.rsc) rsc.push({ url: r.url(), status: r.status(), state: "next-router-state-tree" in h });
      });
      await page.goto(`${lo.url}/handlers/notification/on-review-created`);
      await page.waitForLoadState("networkidle");
      for (const [name, path] of [
        ["Alerts", "/alerts"],
        ["Key browser", "/keys"],
        ["Overview", "/"],
      ] as const) {
        await page.getByRole("link", { name, exact: true }).first().click();
        await page.waitForURL((u) => u.pathname === path, { timeout: 20_000 });
        await page.waitForLoadState("networkidle");
      }
      await page.goBack();
      await page.waitForURL((u) => u.pathname === "/keys", { timeout: 20_000 });
      console.log(`[boundaries] client navigations: ${documents} document load(s), RSC ${JSON.stringify(rsc)}`);
      // A refused router state makes Next's client fall back to loading the page anew.
      expect(documents).toBe(1);
      expect(rsc.filter((r) => r.state).length).toBeGreaterThanOrEqual(3);
      expect(rsc.filter((r) => r.status !== 200)).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it("the build's static files answer GET and HEAD; any other method is 405 with Allow, not 500", async () => {
    const chunk = staticChunk();
    expect((await fetch(`${lo.url}${chunk}`)).status).toBe(200);
    for (const method of ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"]) {
      const r = await fetch(`${lo.url}${chunk}`, {
        method,
        headers: JSON_TYPE,
        ...(method === "OPTIONS" ? {} : { body: "{}" }),
      });
      expect(r.status, method).toBe(405);
      expect(r.headers.get("allow"), method).toBe("GET, HEAD");
    }
  });

  it("a trailing-slash redirect carries the security headers and comes after the Host check", async () => {
    const host = new URL(lo.url).host;
    const r = await raw(lo.url, { path: "/alerts/?range=1h", headers: { host } });
    expect(r.status).toBe(308);
    expect(r.headers.location).toMatch(/\/alerts\?range=1h$/);
    expect(r.headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
    expect(r.headers["referrer-policy"]).toBeTruthy();
    expect((await raw(lo.url, { path: "/alerts/", headers: { host: "evil.example" } })).status).toBe(403);
  });

  it("an unknown /api path is a JSON 404 with { error, detail }, whatever the method", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const r = await fetch(`${lo.url}/api/no-such-endpoint/x`, {
        method,
        headers: JSON_TYPE,
        body: method === "POST" ? "{}" : undefined,
      });
      expect(r.status, method).toBe(404);
      expect(r.headers.get("content-type"), method).toMatch(/application\/json/);
      expect(await r.json(), method).toMatchObject({ error: "not_found", detail: expect.any(String) });
    }
    // A path a route serves, with a method it does not take, stays a 405.
    expect(
      (await fetch(`${lo.url}/api/keys?prefix=x`, { method: "POST", headers: JSON_TYPE, body: "{}" })).status,
    ).toBe(405);
  });
});

describe("real mode: no parameter overrides the operator's limits; other services' consumers stay anonymous", () => {
  let redis: FaultRedis;
  let app: App;
  let kafka: Awaited<ReturnType<typeof consumerGroups>>;
  const SERVICE = "notification";
  const suffix = Date.now().toString(36);
  const topic = `sec-bounds-${suffix}`;
  const ownGroup = `${SERVICE}.sec-${suffix}`;
  const foreignGroup = `otherteam.sec-${suffix}`;
  beforeAll(async () => {
    // 25,000 dedup keys, every command timed (SLOWLOG at 0 µs) from before the app's start-up count.
    redis = await FaultRedis.start("bounds", { password: `pw${suffix}` });
    const c = redis.client();
    for (let i = 0; i < 25_000; i += 5_000) {
      const p = c.pipeline();
      for (let j = i; j < i + 5_000; j++) p.set(`loadtest:dedup:h${j % 4}:${j.toString(36)}`, "done", "PX", 3_600_000);
      await p.exec();
    }
    await c.config("SET", "slowlog-max-len", "100000");
    await c.config("SET", "slowlog-log-slower-than", "0");
    await c.slowlog("RESET");
    c.disconnect();
    [kafka, app] = await Promise.all([
      consumerGroups(topic, [
        `${ownGroup}/${hostname()}-${process.pid}`,
        `${foreignGroup}/${hostname()}-${process.pid}`,
      ]),
      startApp({
        env: {
          REDIS_URL: redis.url,
          KAFKA_BROKERS: "127.0.0.1:9092",
          CONSUMER_TOPICS: topic,
          SERVICE_NAME: SERVICE,
          DEMO: "off",
          INSPECT_EXACT_MAX_KEYS: "30000",
        },
      }),
    ]);
  }, 90_000);
  afterAll(async () => {
    await app?.stop();
    await kafka?.close();
    await redis?.close();
  });

  type Handlers = { scan: ScanProgress; refresh: { started: boolean; retryAfterMs: number } };
  const handlers = async (query = "", headers: Record<string, string> = {}) =>
    (await (await fetch(`${app.url}/api/handlers${query}`, { headers })).json()) as Handlers;
  /** The count's progress once one has finished over the seeded keys (a start-up attempt may fail while Redis connects: it is retried). */
  const finished = async (): Promise<ScanProgress> => {
    let scan: ScanProgress | undefined;
    await expect
      .poll(async () => (scan = (await handlers()).scan).done && scan.finishedAt !== null && scan.total > 0, {
        timeout: 60_000,
        interval: 250,
      })
      .toBe(true);
    return scan!;
  };

  it("the exact count uses at most ~5 % of Redis time, in calls of at most 1.5 ms", async () => {
    const scan = await finished();
    const c = redis.client();
    const log = (await c.slowlog("GET", -1)) as Array<[number, number, number, string[]]>;
    await c.config("SET", "slowlog-log-slower-than", "5000");
    c.disconnect();
    expect(scan.mode).toBe("exact");
    // The count's calls with their own server time: the script (mode `scan`) where a per-key TTL
    // read is needed, else the SCANs the client sends (inside MULTI … EXEC, which the slowlog lists
    // command by command).
    const countCall = (e: [number, number, number, string[]]) => {
      const cmd = e[3][0]?.toLowerCase() ?? "";
      return (["evalsha", "eval"].includes(cmd) && e[3][3] === "scan") || cmd === "scan";
    };
    const calls = log.filter(countCall).map((e) => e[2]);
    const wallMs = Date.parse(scan.finishedAt!) - Date.parse(scan.startedAt!);
    const redisMs = calls.reduce((a, b) => a + b, 0) / 1000;
    const p90 = percentile(calls, 90);
    console.log(
      `[boundaries] exact count of ${scan.total} keys: ${calls.length} calls, ${redisMs.toFixed(1)} ms of Redis time over ${wallMs} ms (${((100 * redisMs) / wallMs).toFixed(1)} %); per call median ${median(calls)} µs, p90 ${p90} µs, max ${percentile(calls, 100)} µs`,
    );
    expect(calls.length).toBeGreaterThan(10);
    expect(redisMs / wallMs).toBeLessThan(0.1);
    // 1.5 ms is the calls' bound; a hypervisor pause on this VM adds 3-13 ms to whatever runs, so the 90th percentile is asserted.
    expect(p90).toBeLessThanOrEqual(1500);
  }, 90_000);

  it("mode=exact does not lift INSPECT_EXACT_MAX_KEYS; refresh=1 is one limit for all callers, whatever address they claim", async () => {
    const c = redis.client();
    const p = c.pipeline();
    for (let j = 0; j < 10_000; j++) p.set(`loadtest:dedup:more:${j.toString(36)}`, "done", "PX", 3_600_000);
    await p.exec();
    c.disconnect();
    await expect
      .poll(async () => (await handlers("?mode=exact&refresh=1")).refresh.started, { timeout: 25_000, interval: 500 })
      .toBe(true);
    // A recount just started: another caller, claiming to be someone else, waits its turn.
    const refused = await handlers("?refresh=1", { "x-forwarded-for": "198.51.100.23" });
    expect(refused.refresh).toMatchObject({ started: false });
    expect(refused.refresh.retryAfterMs).toBeGreaterThan(0);
    const scan = await finished();
    expect(scan.total).toBeGreaterThan(30_000);
    expect(scan.mode).toBe("estimate");
  }, 90_000);

  it("/api/consumers: one cached answer per topic, a group that does not consume it is a 400, other services' members carry no host name or PID", async () => {
    type View = {
      generatedAt: string;
      groups: Array<{
        groupId: string;
        members: Array<{ memberId: string; clientId: string; replica: string; host: string }>;
        partitions: Array<{ memberId: string | null }>;
      }>;
    };
    let body: View | undefined;
    await expect
      .poll(
        async () => {
          const r = await fetch(`${app.url}/api/consumers?topic=${topic}`);
          body = r.ok ? ((await r.json()) as View) : undefined;
          return [ownGroup, foreignGroup].every((g) =>
            body?.groups.some((x) => x.groupId === g && x.members.length > 0),
          );
        },
        { timeout: 45_000, interval: 1_000 },
      )
      .toBe(true);
    const own = body!.groups.find((g) => g.groupId === ownGroup)!;
    const foreign = body!.groups.find((g) => g.groupId === foreignGroup)!;
    expect(own.members[0]!.replica).toBe(`${hostname()}-${process.pid}`);
    expect(own.members[0]!.host).not.toBe("");
    expect(foreign.members[0]).toMatchObject({
      replica: "member-1",
      host: "",
      clientId: `${foreignGroup}/member-1`,
      memberId: `${foreignGroup}/member-1`,
    });
    expect(JSON.stringify(foreign)).not.toContain(hostname());
    expect(JSON.stringify(foreign)).not.toContain(String(process.pid));
    // A group asked for is picked out of the topic's shared answer; any other value costs no Kafka call.
    const one = (await (await fetch(`${app.url}/api/consumers?topic=${topic}&group=${foreignGroup}`)).json()) as View;
    expect(one.groups.map((g) => g.groupId)).toEqual([foreignGroup]);
    for (const g of ["no-such-group-1", "no-such-group-2", `${SERVICE}.nothing`]) {
      const r = await fetch(`${app.url}/api/consumers?topic=${topic}&group=${g}`);
      expect(r.status, g).toBe(400);
      expect(await r.json()).toMatchObject({
        error: "bad_request",
        detail: expect.stringMatching(/not a consumer group of/),
      });
    }
  }, 90_000);
});

describe("slow clients and connection count are bounded", () => {
  let tight: App;
  beforeAll(async () => {
    tight = await startApp({
      env: { DEMO: "off", HTTP_HEADERS_TIMEOUT_MS: "2000", HTTP_BODY_TIMEOUT_MS: "3000", HTTP_MAX_CONNECTIONS: "40" },
    });
  }, 60_000);
  afterAll(async () => tight?.stop());

  it("headers or a body trickled byte by byte are cut at their deadline; connections beyond the cap are closed at once", async () => {
    const host = new URL(tight.url).host;
    expect(tight.logs()).toMatch(
      /\[dedup-health\] http limits: headers within 2000 ms, a body within 3000 ms of them, at most 40 connections/,
    );
    const [slowHeaders, slowBody, idle] = await Promise.all([
      slowClient(tight.url, {
        head: `GET / HTTP/1.1\r\nHost: ${host}\r\n`,
        trickle: "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        everyMs: 250,
        maxMs: 8_000,
      }),
      slowClient(tight.url, {
        head: `PUT /api/demo/faults HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
        trickle: "{".padEnd(60, " "),
        everyMs: 250,
        maxMs: 8_000,
      }),
      slowClient(tight.url, { head: "", trickle: "", everyMs: 250, maxMs: 8_000 }),
    ]);
    console.log(
      `[boundaries] cut after: slow headers ${slowHeaders} ms, slow body ${slowBody} ms, an idle connection ${idle} ms (deadlines 2000 / 2000 + 3000 ms)`,
    );
    // null (never cut) fails as Infinity.
    expect(slowHeaders ?? Infinity, "slow headers").toBeLessThan(4_000);
    expect(slowBody ?? Infinity, "slow body").toBeLessThan(6_500);
    expect(idle ?? Infinity, "idle connection").toBeLessThan(4_000);
    // 60 idle connections against a cap of 40: the excess is closed at once.
    const many = await Promise.all(
      Array.from({ length: 60 }, () => slowClient(tight.url, { head: "", trickle: "", everyMs: 1_000, maxMs: 800 })),
    );
    const closedAtOnce = many.filter((ms) => ms !== null).length;
    console.log(`[boundaries] 60 idle connections, cap 40: ${closedAtOnce} closed within 800 ms`);
    expect(closedAtOnce).toBeGreaterThanOrEqual(20);
    // Once they are gone, the server answers as before.
    await expect
      .poll(async () => (await fetch(`${tight.url}/api/health`)).status, { timeout: 10_000, interval: 500 })
      .toBe(200);
  }, 60_000);
});
