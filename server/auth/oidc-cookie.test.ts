import { describe, expect, it } from "vitest";
import { cookieOf, readLoginState, readSession, setCookieHeader, signValue, verifyValue } from "./oidc-cookie";

const SECRET = "s".repeat(40);
const NOW = 1_800_000_000;
const session = (over: Record<string, unknown> = {}) =>
  signValue(
    { typ: "session", name: "otto", email: "otto@example.com", groups: ["billing-devs"], exp: NOW + 60, ...over },
    SECRET,
  );

describe("session cookie", () => {
  it("names the user it was signed for until it expires", () => {
    expect(readSession(session(), SECRET, NOW)).toEqual({
      typ: "session",
      name: "otto",
      email: "otto@example.com",
      groups: ["billing-devs"],
      exp: NOW + 60,
    });
    expect(readSession(session(), SECRET, NOW + 59)?.name).toBe("otto");
  });

  it("is no one once expired", () => {
    expect(readSession(session(), SECRET, NOW + 60)).toBeNull();
    expect(readSession(session({ exp: "never" }), SECRET, NOW)).toBeNull();
  });

  it("is no one when its content was changed (a viewer making itself an operator)", () => {
    const [body, mac] = session().split(".");
    const claims = JSON.parse(Buffer.from(body!, "base64url").toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, groups: ["sre"] })).toString("base64url");
    expect(readSession(`${forged}.${mac}`, SECRET, NOW)).toBeNull();
  });

  it("is no one when signed with another secret, unsigned, or garbage", () => {
    expect(
      readSession(signValue({ typ: "session", name: "otto", groups: [], exp: NOW + 60 }, "x".repeat(40)), SECRET, NOW),
    ).toBeNull();
    expect(readSession(session().split(".")[0], SECRET, NOW)).toBeNull();
    expect(readSession(`${session()}.extra`, SECRET, NOW)).toBeNull();
    expect(readSession("not-a-cookie", SECRET, NOW)).toBeNull();
    expect(readSession("", SECRET, NOW)).toBeNull();
    expect(readSession(undefined, SECRET, NOW)).toBeNull();
    expect(verifyValue(`${Buffer.from("[1,2").toString("base64url")}.AAAA`, SECRET, NOW)).toBeNull();
  });

  it("is no one when its groups or name are not what a sign-in writes", () => {
    expect(readSession(session({ groups: "sre" }), SECRET, NOW)).toBeNull();
    expect(readSession(session({ name: "" }), SECRET, NOW)).toBeNull();
    expect(readSession(session({ email: 7 }), SECRET, NOW)).toBeNull();
  });

  it("a login-state value never passes as a session, nor a session as a login state", () => {
    const login = signValue(
      { typ: "login", state: "s", verifier: "v", nonce: "n", returnTo: "/", exp: NOW + 60, name: "otto", groups: [] },
      SECRET,
    );
    expect(readSession(login, SECRET, NOW)).toBeNull();
    expect(readLoginState(login, SECRET, NOW)).toEqual({
      typ: "login",
      state: "s",
      verifier: "v",
      nonce: "n",
      returnTo: "/",
      exp: NOW + 60,
    });
    expect(readLoginState(session(), SECRET, NOW)).toBeNull();
    expect(readLoginState(login, SECRET, NOW + 60)).toBeNull();
  });
});

describe("cookie headers", () => {
  it("finds a cookie among others by exact name", () => {
    expect(cookieOf("a=1; dh_session=abc.def; dh_session_x=no", "dh_session")).toBe("abc.def");
    expect(cookieOf("x_dh_session=1", "dh_session")).toBeUndefined();
    expect(cookieOf(null, "dh_session")).toBeUndefined();
  });

  it("sets http-only, SameSite=Lax cookies, Secure only over https, Max-Age 0 to clear", () => {
    expect(setCookieHeader("dh_session", "v", 28800, false)).toBe(
      "dh_session=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=28800",
    );
    expect(setCookieHeader("dh_session", "", 0, true)).toBe(
      "dh_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
    );
  });
});
