import { describe, expect, it } from "vitest";
import { checkAccess, hostOnly, isLocalRequest, isLoopbackAddress, tokensEqual } from "./access";

const TOKEN = "s3cret-token-of-16+chars";
const local = { host: "localhost:3000", "x-forwarded-for": "127.0.0.1" };
const h = (o: Record<string, string>) => new Headers(o);

describe("access rule for state-changing endpoints", () => {
  it("embedded mode without a token: open to anyone", () => {
    expect(checkAccess(h({ host: "demo.example.com", "x-forwarded-for": "203.0.113.9" }), { mode: "embedded" })).toMatchObject({ ok: true, reason: "embedded" });
  });

  it("real mode without a token: open to loopback requests with a localhost Host", () => {
    expect(checkAccess(h(local), { mode: "real" })).toMatchObject({ ok: true, reason: "local" });
    expect(checkAccess(h({ host: "127.0.0.1:3000", "x-forwarded-for": "::ffff:127.0.0.1" }), { mode: "real" }).ok).toBe(true);
    expect(checkAccess(h({ host: "[::1]:3000", "x-forwarded-for": "::1" }), { mode: "real" }).ok).toBe(true);
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
    for (const c of cases) expect(checkAccess(h(c), { mode: "real" }), JSON.stringify(c)).toMatchObject({ ok: false, status: 403, error: "forbidden" });
  });

  it("real mode without a token: 403 for a cross-site browser request reaching localhost (CSRF / DNS rebinding)", () => {
    expect(checkAccess(h({ ...local, origin: "https://evil.example" }), { mode: "real" }).ok).toBe(false);
    expect(checkAccess(h({ ...local, "sec-fetch-site": "cross-site" }), { mode: "real" }).ok).toBe(false);
    expect(checkAccess(h({ ...local, "x-forwarded-host": "evil.example" }), { mode: "real" }).ok).toBe(false);
    expect(checkAccess(h({ ...local, origin: "http://localhost:3000", "sec-fetch-site": "same-origin" }), { mode: "real" }).ok).toBe(true);
  });

  it("with WORKSHOP_TOKEN: the bearer token is required from anywhere, even locally and in embedded mode", () => {
    for (const mode of ["real", "embedded"] as const) {
      expect(checkAccess(h(local), { mode, WORKSHOP_TOKEN: TOKEN })).toMatchObject({ ok: false, status: 401, error: "unauthorized" });
      expect(checkAccess(h({ ...local, authorization: "Bearer wrong-token-xxxxxxxxxx" }), { mode, WORKSHOP_TOKEN: TOKEN })).toMatchObject({ ok: false, status: 401 });
      expect(checkAccess(h({ ...local, authorization: `Basic ${TOKEN}` }), { mode, WORKSHOP_TOKEN: TOKEN })).toMatchObject({ ok: false, status: 401 });
    }
    const remote = { host: "dashboard.example.com", "x-forwarded-for": "203.0.113.9", authorization: `Bearer ${TOKEN}` };
    expect(checkAccess(h(remote), { mode: "real", WORKSHOP_TOKEN: TOKEN })).toMatchObject({ ok: true, reason: "token" });
    expect(checkAccess(h({ ...remote, authorization: `bearer  ${TOKEN} ` }), { mode: "real", WORKSHOP_TOKEN: TOKEN }).ok).toBe(true);
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
    expect(isLocalRequest(h({ host: "localhost", "x-forwarded-for": " " }))).toBe(false);
  });
});
