import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "@/server/config";
import { groupsOf, safeReturnPath, userOf } from "./oidc-client";

const OIDC = {
  AUTH_MODE: "oidc",
  OIDC_ISSUER: "https://login.example.com/realms/ops",
  OIDC_CLIENT_ID: "dedup-health",
  SESSION_SECRET: "k".repeat(32),
};

/** The variable the ConfigError of `env` names. */
function failing(env: Record<string, string>): string {
  try {
    parseConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return `${e.variable}: ${e.message}`;
    throw e;
  }
  throw new Error("parseConfig accepted it");
}

describe("OIDC configuration", () => {
  it("AUTH_MODE=oidc names the first missing variable sign-in cannot work without", () => {
    expect(failing({ AUTH_MODE: "oidc" })).toMatch(/^OIDC_ISSUER: .*required with AUTH_MODE=oidc/);
    expect(failing({ ...OIDC, OIDC_CLIENT_ID: "" })).toMatch(/^OIDC_CLIENT_ID: .*client id/);
    expect(failing({ ...OIDC, SESSION_SECRET: " " })).toMatch(/^SESSION_SECRET: .*32/);
  });

  it("refuses a short session secret and a plain-http issuer off this machine", () => {
    expect(failing({ ...OIDC, SESSION_SECRET: "short" })).toMatch(/^SESSION_SECRET: .*at least 32 characters/);
    expect(failing({ ...OIDC, OIDC_ISSUER: "http://login.example.com" })).toMatch(/^OIDC_ISSUER: .*https/);
    expect(parseConfig({ ...OIDC, OIDC_ISSUER: "http://127.0.0.1:3581" }).OIDC_ISSUER).toBe("http://127.0.0.1:3581");
  });

  it("reads durations, the groups claim and the scopes with their defaults", () => {
    const c = parseConfig(OIDC);
    expect([c.SESSION_MAX_AGE, c.OIDC_GROUPS_CLAIM, c.OIDC_SCOPES]).toEqual([
      8 * 3600,
      "groups",
      "openid profile email",
    ]);
    expect(parseConfig({ ...OIDC, SESSION_MAX_AGE: "30m" }).SESSION_MAX_AGE).toBe(1800);
    expect(parseConfig({ ...OIDC, SESSION_MAX_AGE: "3600" }).SESSION_MAX_AGE).toBe(3600);
    expect(failing({ ...OIDC, SESSION_MAX_AGE: "8 hours" })).toMatch(/^SESSION_MAX_AGE: /);
    expect(failing({ ...OIDC, SESSION_MAX_AGE: "10s" })).toMatch(/^SESSION_MAX_AGE: .*60 s/);
    expect(failing({ ...OIDC, OIDC_SCOPES: "profile email" })).toMatch(/^OIDC_SCOPES: .*openid/);
  });

  it("other modes need none of it", () => {
    expect(parseConfig({}).OIDC_ISSUER).toBeUndefined();
    expect(parseConfig({ AUTH_MODE: "token" }).SESSION_SECRET).toBeUndefined();
  });
});

describe("what a sign-in keeps of the provider's answer", () => {
  it("a user is named by preferred_username, then name, e-mail, sub", () => {
    expect(userOf({ sub: "u1", preferred_username: "otto", name: "Otto B", email: "o@x" }, ["g"])).toEqual({
      name: "otto",
      email: "o@x",
      groups: ["g"],
    });
    expect(userOf({ sub: "u1", email: "o@x" }, []).name).toBe("o@x");
    expect(userOf({ sub: "u1" }, []).name).toBe("u1");
  });

  it("groups are a list of strings or one string; anything else is unread", () => {
    expect(groupsOf(["a", "b"])).toEqual(["a", "b"]);
    expect(groupsOf("a")).toEqual(["a"]);
    expect(groupsOf([1])).toBeNull();
    expect(groupsOf(undefined)).toBeNull();
  });

  it("returns only to a path of this app, never to another origin or an API", () => {
    expect(safeReturnPath("/keys?prefix=a")).toBe("/keys?prefix=a");
    for (const bad of ["//evil.example", "/\\evil.example", "https://evil.example", "/api/auth/logout", null, ""])
      expect(safeReturnPath(bad)).toBe("/");
  });
});
