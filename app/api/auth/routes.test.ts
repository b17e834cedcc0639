/**
 * The sign-in routes called directly: in token mode they do not exist (404 `{ error, detail }`) and
 * the session answer says sign-in is off; in oidc mode the session answer names the user of a
 * cookie signed with SESSION_SECRET and no one for a forged one. The whole sign-in against a real
 * provider is e2e/oidc.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import { authSessionSchema } from "@/lib/api/auth";
import { errorBodySchema } from "@/lib/api/common";
import { SESSION_COOKIE, signValue } from "@/server/auth/oidc-cookie";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { GET as callback } from "./callback/route";
import { GET as login } from "./login/route";
import { POST as logout } from "./logout/route";
import { GET as session } from "./session/route";

configOfFile();

const SECRET = "q".repeat(40);
const OIDC = {
  AUTH_MODE: "oidc",
  OIDC_ISSUER: "https://login.example.com",
  OIDC_CLIENT_ID: "dedup-health",
  SESSION_SECRET: SECRET,
};
const withCookie = (value: string) =>
  new Request("http://localhost/api/auth/session", { headers: { cookie: `${SESSION_COOKIE}=${value}` } });

describe("sign-in routes", () => {
  it("do not exist outside AUTH_MODE=oidc: 404 with a reason, and the session answer says sign-in is off", async () => {
    useConfig({});
    for (const res of [
      await login(new Request("http://localhost/api/auth/login")),
      await callback(new Request("http://localhost/api/auth/callback?code=a&state=b")),
      await logout(new Request("http://localhost/api/auth/logout", { method: "POST", body: "{}" })),
    ]) {
      expect(res.status).toBe(404);
      expect(errorBodySchema.parse(await res.json()).detail).toMatch(/AUTH_MODE/);
    }
    const s = authSessionSchema.parse(
      await (
        await session(
          withCookie(signValue({ typ: "session", name: "otto", groups: [], exp: Date.now() / 1000 + 60 }, SECRET)),
        )
      ).json(),
    );
    expect(s).toEqual({ signIn: false, user: null });
  });

  it("in oidc mode the session answer names the signed cookie's user and no one for a forged one", async () => {
    useConfig(OIDC);
    const exp = Math.floor(Date.now() / 1000) + 600;
    const good = authSessionSchema.parse(
      await (
        await session(
          withCookie(signValue({ typ: "session", name: "otto", email: "o@x", groups: ["billing-devs"], exp }, SECRET)),
        )
      ).json(),
    );
    expect(good).toEqual({
      signIn: true,
      user: { name: "otto", email: "o@x", groups: ["billing-devs"], expiresAt: new Date(exp * 1000).toISOString() },
    });
    const forged = authSessionSchema.parse(
      await (
        await session(withCookie(signValue({ typ: "session", name: "otto", groups: ["sre"], exp }, "z".repeat(40))))
      ).json(),
    );
    expect(forged).toEqual({ signIn: true, user: null });
  });

  it("a callback without the login cookie is a 400 that sets no session", async () => {
    useConfig(OIDC);
    const res = await callback(
      new Request("http://localhost/api/auth/callback?code=a&state=b", { headers: { host: "localhost" } }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});
