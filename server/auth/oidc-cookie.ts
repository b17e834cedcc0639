/**
 * The signed cookies of OIDC sign-in: the session (who signed in, until when) and the short-lived
 * login state (state, PKCE verifier, where to return). A value is `base64url(JSON).base64url(HMAC-SHA256)`
 * keyed by `SESSION_SECRET`; nothing in it is secret from the browser, but nothing in it can be
 * changed without the key. Pure functions: the clock and the key are arguments.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Name of the session cookie. */
export const SESSION_COOKIE = "dh_session";
/** Name of the login-state cookie (lives for one sign-in round trip). */
export const LOGIN_COOKIE = "dh_oidc_login";
/** How long a sign-in round trip at the provider may take, in seconds. */
export const LOGIN_MAX_AGE_S = 600;

/** The user a session cookie carries. */
export interface SessionUser {
  name: string;
  email?: string;
  groups: string[];
}

/** What the session cookie holds: the user and its expiry (seconds since the epoch). */
export interface SessionClaims extends SessionUser {
  exp: number;
  /** Kind tag, so a login-state value can never pass as a session and back. */
  typ: "session";
}

/** What the login-state cookie holds between the redirect to the provider and the callback. */
export interface LoginState {
  typ: "login";
  state: string;
  verifier: string;
  nonce: string;
  /** A path of this app to land on after sign-in. */
  returnTo: string;
  exp: number;
}

function mac(body: string, secret: string): Buffer {
  return createHmac("sha256", secret).update(body).digest();
}

/** Signs `payload` with `secret`: `base64url(JSON).base64url(HMAC-SHA256)`. */
export function signValue(payload: object, secret: string): string {
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return `${body}.${mac(body, secret).toString("base64url")}`;
}

/** The payload of a value {@link signValue} made with `secret`, or null when forged, malformed or expired at `nowS`. */
export function verifyValue(value: string, secret: string, nowS: number): Record<string, unknown> | null {
  const dot = value.indexOf(".");
  if (dot <= 0 || dot !== value.lastIndexOf(".")) return null;
  const body = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), "base64url");
  const want = mac(body, secret);
  if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const exp = (parsed as { exp?: unknown }).exp;
  if (typeof exp !== "number" || !(exp > nowS)) return null;
  return parsed as Record<string, unknown>;
}

const isStringArray = (x: unknown): x is string[] => Array.isArray(x) && x.every((g) => typeof g === "string");

/** The session in a cookie value, or null (forged, expired, malformed, or not a session). */
export function readSession(value: string | undefined, secret: string, nowS: number): SessionClaims | null {
  if (!value) return null;
  const p = verifyValue(value, secret, nowS);
  if (!p || p.typ !== "session" || typeof p.name !== "string" || p.name === "" || !isStringArray(p.groups)) return null;
  if (p.email !== undefined && typeof p.email !== "string") return null;
  return {
    typ: "session",
    name: p.name,
    groups: p.groups,
    exp: p.exp as number,
    ...(typeof p.email === "string" ? { email: p.email } : {}),
  };
}

/** The login state in a cookie value, or null (forged, expired, malformed, or not a login state). */
export function readLoginState(value: string | undefined, secret: string, nowS: number): LoginState | null {
  if (!value) return null;
  const p = verifyValue(value, secret, nowS);
  if (!p || p.typ !== "login") return null;
  const { state, verifier, nonce, returnTo } = p;
  if (
    typeof state !== "string" ||
    typeof verifier !== "string" ||
    typeof nonce !== "string" ||
    typeof returnTo !== "string"
  )
    return null;
  return { typ: "login", state, verifier, nonce, returnTo, exp: p.exp as number };
}

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function cookieOf(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A `Set-Cookie` value: http-only, SameSite=Lax, path `/`, Secure when `secure`; `maxAgeS` 0 clears it. */
export function setCookieHeader(name: string, value: string, maxAgeS: number, secure: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure ? "; Secure" : ""}`;
}
