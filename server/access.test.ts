import { describe, expect, it } from "vitest";
import {
  accessSummary,
  checkAccess,
  clientAddress,
  crossSiteRefusal,
  fromTrustedProxy,
  hostOnly,
  isLocalRequest,
  isLoopbackAddress,
  listenInfo,
  MAX_BODY_BYTES,
  tokensEqual,
} from "./access";

/** The server bound to 127.0.0.1 (what `npm start` and the e2e harness do). */
const LB = { loopback: true };

const TOKEN = "s3cret-token-of-16+chars";
const local = { host: "localhost:3000", "x-forwarded-for": "127.0.0.1" };
const h = (o: Record<string, string>) => new Headers(o);

describe("access rule for state-changing endpoints", () => {
  it("embedded mode without a token follows the same locality rule: forwarded or beyond loopback is refused", () => {
    expect(checkAccess(h(local), { mode: "embedded" }, LB)).toMatchObject({ ok: true, reason: "local" });
    expect(checkAccess(h({ ...local, "x-forwarded-for": "203.0.113.9" }), { mode: "embedded" }, LB)).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(checkAccess(h({ ...local, forwarded: "for=203.0.113.9" }), { mode: "embedded" }, LB)).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(checkAccess(h({ ...local, "x-real-ip": "203.0.113.9" }), { mode: "embedded" }, LB)).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(checkAccess(h(local), { mode: "embedded" }, { loopback: false })).toMatchObject({
      ok: false,
      status: 403,
      detail: expect.stringMatching(/read-only/),
    });
  });

  it("real mode without a token: open to loopback requests with a localhost Host", () => {
    expect(checkAccess(h(local), { mode: "real" }, LB)).toMatchObject({ ok: true, reason: "local" });
    expect(
      checkAccess(h({ host: "127.0.0.1:3000", "x-forwarded-for": "::ffff:127.0.0.1" }), { mode: "real" }, LB).ok,
    ).toBe(true);
    expect(checkAccess(h({ host: "[::1]:3000", "x-forwarded-for": "::1" }), { mode: "real" }, LB).ok).toBe(true);
  });

  it("real mode without a token: 403 for a remote peer, a foreign Host, a proxy chain with a remote client, or no peer info", () => {
    const cases: Array<Record<string, string>> = [
      { host: "localhost:3000", "x-forwarded-for": "192.168.1.20" },
      { host: "dashboard.internal:3000", "x-forwarded-for": "127.0.0.1" },
      { host: "localhost:3000", "x-forwarded-for": "203.0.113.9, 127.0.0.1" },
      { host: "localhost:3000" },
      { host: "localhost.evil.com", "x-forwarded-for": "127.0.0.1" },
      { host: "127.0.0.1.nip.io", "x-forwarded-for": "127.0.0.1" },
    ];
    for (const c of cases)
      expect(checkAccess(h(c), { mode: "real" }, LB), JSON.stringify(c)).toMatchObject({
        ok: false,
        status: 403,
        error: "forbidden",
      });
  });

  it("real mode without a token: 403 for a cross-site browser request reaching localhost (CSRF / DNS rebinding)", () => {
    expect(checkAccess(h({ ...local, origin: "https://evil.example" }), { mode: "real" }, LB).ok).toBe(false);
    expect(checkAccess(h({ ...local, "sec-fetch-site": "cross-site" }), { mode: "real" }, LB).ok).toBe(false);
    expect(checkAccess(h({ ...local, "x-forwarded-host": "evil.example" }), { mode: "real" }, LB).ok).toBe(false);
    expect(
      checkAccess(
        h({ ...local, origin: "http://localhost:3000", "sec-fetch-site": "same-origin" }),
        { mode: "real" },
        LB,
      ).ok,
    ).toBe(true);
  });

  it("with WORKSHOP_TOKEN: the bearer token is required from anywhere, even locally and in embedded mode", () => {
    for (const mode of ["real", "embedded"] as const) {
      expect(checkAccess(h(local), { mode, WORKSHOP_TOKEN: TOKEN }, LB)).toMatchObject({
        ok: false,
        status: 401,
        error: "unauthorized",
      });
      expect(
        checkAccess(
          h({ ...local, authorization: "Bearer wrong-token-xxxxxxxxxx" }),
          { mode, WORKSHOP_TOKEN: TOKEN },
          LB,
        ),
      ).toMatchObject({ ok: false, status: 401 });
      expect(
        checkAccess(h({ ...local, authorization: `Basic ${TOKEN}` }), { mode, WORKSHOP_TOKEN: TOKEN }, LB),
      ).toMatchObject({ ok: false, status: 401 });
    }
    const remote = {
      host: "dashboard.example.com",
      "x-forwarded-for": "203.0.113.9",
      authorization: `Bearer ${TOKEN}`,
    };
    expect(checkAccess(h(remote), { mode: "real", WORKSHOP_TOKEN: TOKEN }, LB)).toMatchObject({
      ok: true,
      reason: "token",
    });
    expect(
      checkAccess(h({ ...remote, authorization: `bearer  ${TOKEN} ` }), { mode: "real", WORKSHOP_TOKEN: TOKEN }, LB).ok,
    ).toBe(true);
  });

  it("token comparison: equal only for identical strings, including prefixes and different lengths", () => {
    expect(tokensEqual(TOKEN, TOKEN)).toBe(true);
    expect(tokensEqual(TOKEN, TOKEN.slice(0, -1))).toBe(false);
    expect(tokensEqual(TOKEN, `${TOKEN}x`)).toBe(false);
    expect(tokensEqual("", TOKEN)).toBe(false);
  });

  it("parses hosts and loopback addresses", () => {
    expect(hostOnly("LocalHost:3000")).toBe("localhost");
    expect(hostOnly("[::1]:3000")).toBe("[::1]");
    expect(hostOnly("127.0.0.1")).toBe("127.0.0.1");
    expect(isLoopbackAddress("127.8.9.10")).toBe(true);
    expect(isLoopbackAddress("128.0.0.1")).toBe(false);
    expect(isLoopbackAddress("127.0.0.256")).toBe(false);
    expect(isLoopbackAddress("::ffff:10.0.0.1")).toBe(false);
    expect(isLocalRequest(h({ host: "localhost", "x-forwarded-for": " " }), LB)).toBe(false);
  });

  it("listening beyond loopback without a token: read-only, whatever the headers claim", () => {
    for (const headers of [
      local,
      { host: "localhost:3000", "x-forwarded-for": "::1" },
      {
        host: "127.0.0.1:3000",
        "x-forwarded-for": "127.0.0.1",
        origin: "http://127.0.0.1:3000",
        "sec-fetch-site": "same-origin",
      },
    ]) {
      expect(checkAccess(h(headers), { mode: "real" }, { loopback: false })).toMatchObject({
        ok: false,
        status: 403,
        detail: expect.stringMatching(/read-only/),
      });
    }
    expect(
      checkAccess(
        h({ ...local, authorization: `Bearer ${TOKEN}` }),
        { mode: "real", WORKSHOP_TOKEN: TOKEN },
        { loopback: false },
      ).ok,
    ).toBe(true);
  });

  it("any forwarding header makes a request non-local: X-Forwarded-For chains, X-Real-IP, Forwarded, X-Forwarded-Host", () => {
    const cases: Array<Record<string, string>> = [
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1, 127.0.0.1" },
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", "x-real-ip": "127.0.0.1" },
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", "x-real-ip": "203.0.113.9" },
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", forwarded: "for=127.0.0.1" },
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", forwarded: 'for="[::1]:4711";proto=http' },
      { host: "localhost:3000", "x-forwarded-for": "127.0.0.1", "x-forwarded-host": "localhost:3001" },
    ];
    for (const c of cases)
      expect(checkAccess(h(c), { mode: "real" }, LB), JSON.stringify(c)).toMatchObject({ ok: false, status: 403 });
    // Next's own copy of the Host is not a forwarding header.
    expect(checkAccess(h({ ...local, "x-forwarded-host": "localhost:3000" }), { mode: "real" }, LB).ok).toBe(true);
  });

  it("TRUSTED_PROXIES: a client behind a proxy is never local, whatever loopback address it or the proxy reports", () => {
    const c = { mode: "real" as const, TRUSTED_PROXIES: ["127.0.0.1", "10.0.0.2"] };
    expect(checkAccess(h({ host: "localhost:3000", "x-forwarded-for": "127.0.0.1" }), c, LB).ok).toBe(true);
    expect(checkAccess(h({ host: "localhost:3000", "x-forwarded-for": "203.0.113.9, 127.0.0.1" }), c, LB).ok).toBe(
      false,
    );
    // ::1 as a trusted proxy reports it is that proxy's machine, not this socket's peer.
    expect(checkAccess(h({ host: "localhost:3000", "x-forwarded-for": "::1, 10.0.0.2" }), c, LB).ok).toBe(false);
    expect(
      checkAccess(h({ host: "localhost:3000", "x-forwarded-for": "127.0.0.1", "x-real-ip": "198.51.100.4" }), c, LB).ok,
    ).toBe(false);
    expect(
      checkAccess(h({ host: "localhost:3000", "x-forwarded-for": "127.0.0.1", forwarded: "for=198.51.100.4" }), c, LB)
        .ok,
    ).toBe(false);
    // An untrusted hop in the middle is the client, whatever it claims before it.
    expect(clientAddress(h({ "x-forwarded-for": "127.0.0.1, 198.51.100.4, 10.0.0.2" }), c.TRUSTED_PROXIES)).toBe(
      "198.51.100.4",
    );
  });

  it("a client behind a trusted proxy cannot make itself local: loopback claims in X-Forwarded-For, Forwarded or X-Real-IP", () => {
    const c = { mode: "real" as const, TRUSTED_PROXIES: ["127.0.0.1"] };
    const spoofs: Array<Record<string, string>> = [
      // nginx with X-Real-IP set and the client's X-Forwarded-For passed on.
      { "x-forwarded-for": "::1", "x-real-ip": "203.0.113.7" },
      { "x-forwarded-for": "127.0.0.2", "x-real-ip": "203.0.113.7" },
      { "x-forwarded-for": "127.0.0.1", forwarded: 'for="[::1]"' },
      // nginx appending the client to what the client sent.
      { "x-forwarded-for": "::1, 203.0.113.7" },
      { "x-forwarded-for": "127.0.0.2, 203.0.113.7" },
      { "x-forwarded-for": "127.0.0.1, 127.0.0.1" },
      { "x-forwarded-for": "127.0.0.1", "x-real-ip": "127.0.0.1" },
    ];
    for (const sp of spoofs)
      expect(checkAccess(h({ host: "localhost:3000", ...sp }), c, LB), JSON.stringify(sp)).toMatchObject({
        ok: false,
        status: 403,
      });
  });

  it("the client address is the right-most untrusted entry of the one configured header; other forwarding headers are ignored", () => {
    const t = ["10.0.0.2"];
    expect(
      clientAddress(
        h({ "x-forwarded-for": "::1, 203.0.113.7, 10.0.0.2", "x-real-ip": "::1", forwarded: "for=127.0.0.1" }),
        t,
      ),
    ).toBe("203.0.113.7");
    expect(clientAddress(h({ "x-forwarded-for": "203.0.113.7", "x-real-ip": "127.0.0.1" }), t)).toBe("203.0.113.7");
    expect(clientAddress(h({ "x-real-ip": "127.0.0.1" }), t)).toBeNull();
    expect(
      clientAddress(
        h({ "x-forwarded-for": "::1", forwarded: 'for="[2001:db8::5]:4711", for=10.0.0.2' }),
        t,
        "forwarded",
      ),
    ).toBe("2001:db8::5");
    expect(clientAddress(h({ "x-forwarded-for": "10.0.0.2" }), t)).toBe("10.0.0.2");
    expect(fromTrustedProxy(h({ "x-forwarded-for": "198.51.100.4, 10.0.0.2" }), t)).toBe(true);
    expect(fromTrustedProxy(h({ "x-forwarded-for": "10.0.0.2, 198.51.100.4" }), t)).toBe(false);
    expect(fromTrustedProxy(h({ "x-forwarded-for": "198.51.100.4", "x-real-ip": "10.0.0.2" }), t)).toBe(false);
    expect(fromTrustedProxy(h({ "x-real-ip": "10.0.0.2" }), t, "x-real-ip")).toBe(true);
    // With another header configured, its presence is a forwarding too: not local.
    expect(isLocalRequest(h({ ...local, "x-client-ip": "127.0.0.1" }), LB, "x-client-ip")).toBe(false);
    expect(isLocalRequest(h(local), LB, "x-client-ip")).toBe(true);
  });

  it("reads the listening host from next's -H / --hostname", () => {
    expect(listenInfo(["node", "next", "start", "-p", "3000", "-H", "127.0.0.1"], {})).toEqual({ loopback: true });
    expect(listenInfo(["node", "next", "start", "--hostname=localhost"], {})).toEqual({ loopback: true });
    expect(listenInfo(["node", "next", "start", "-H", "0.0.0.0"], {})).toEqual({ loopback: false });
    expect(listenInfo(["node", "next", "start", "-p", "3000"], {})).toEqual({ loopback: false });
    expect(listenInfo(["node", "next", "dev"], { __NEXT_PRIVATE_ORIGIN: "http://127.0.0.1:3000" })).toEqual({
      loopback: true,
    });
    expect(listenInfo(["node", "next", "dev"], { __NEXT_PRIVATE_ORIGIN: "http://localhost:3000" })).toEqual({
      loopback: false,
    });
  });

  it("cross-site callers are refused in every mode; the app's own pages and non-browser clients are not", () => {
    expect(crossSiteRefusal(h({ host: "localhost:3000", "sec-fetch-site": "cross-site" }))).toMatch(/cross-site/);
    expect(crossSiteRefusal(h({ host: "localhost:3000", "sec-fetch-site": "same-site" }))).toMatch(/same-site/);
    expect(crossSiteRefusal(h({ host: "localhost:3000", origin: "http://evil.example" }))).toMatch(/another site/);
    expect(crossSiteRefusal(h({ host: "localhost:3000", origin: "http://localhost:3001" }))).toMatch(/another site/);
    expect(crossSiteRefusal(h({ host: "localhost:3000", origin: "null" }))).toMatch(/null/);
    expect(
      crossSiteRefusal(h({ host: "localhost:3000", origin: "http://localhost:3000", "sec-fetch-site": "same-origin" })),
    ).toBeNull();
    expect(crossSiteRefusal(h({ host: "localhost:3000" }))).toBeNull();
  });

  it("says at start-up which of the four regimes applies", () => {
    expect(accessSummary({ mode: "real" }, { loopback: false }, "0.0.0.0")).toMatch(/^read-only/);
    expect(accessSummary({ mode: "real", WORKSHOP_TOKEN: TOKEN }, { loopback: false }, "0.0.0.0")).toMatch(/Bearer/);
    expect(accessSummary({ mode: "real" }, LB, "127.0.0.1")).toMatch(/this machine only/);
    expect(accessSummary({ mode: "embedded" }, LB, "127.0.0.1")).toMatch(/^embedded mode: .*this machine only/);
    expect(accessSummary({ mode: "embedded" }, { loopback: false }, "0.0.0.0")).toMatch(
      /^read-only: listening on 0\.0\.0\.0 .*embedded mode/,
    );
    expect(
      accessSummary(
        { mode: "real", AUTH_MODE: "proxy", TRUSTED_PROXIES: ["10.0.0.2"] },
        { loopback: false },
        "0.0.0.0",
      ),
    ).toMatch(/^proxy mode: users are who 10\.0\.0\.2 name .*x-forwarded-for/);
    expect(accessSummary({ mode: "real", AUTH_MODE: "oidc" }, LB, "127.0.0.1")).toMatch(/^oidc mode: users sign in/);
  });
});

describe("body limits", () => {
  it("Next.js buffers no more of a body for proxy.ts than a route may read", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const nextConfig = require("../next.config.js") as { experimental: { proxyClientMaxBodySize: number } };
    expect(nextConfig.experimental.proxyClientMaxBodySize).toBe(MAX_BODY_BYTES);
  });
});
