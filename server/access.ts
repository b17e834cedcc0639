/**
 * Who may call the endpoints that change state (workshop runs, demo sources, demo faults).
 *
 * The rule, in order:
 * 1. `WORKSHOP_TOKEN` set → `Authorization: Bearer <token>` is required from anywhere, in every
 *    mode (compared in constant time); missing or wrong → 401.
 * 2. Embedded mode (no Kafka, no Redis: a one-process demo) → open.
 * 3. Otherwise only requests from this machine → else 403.
 *
 * ## How "from this machine" is decided (route handlers do not see the peer address)
 * Next's own server (`next start` / `next dev`) copies the socket's remote address into
 * `x-forwarded-for` when the request has none (base-server.js: `headers['x-forwarded-for'] ??=
 * socket.remoteAddress`). A request counts as local only when ALL of these hold:
 * - `Host` is `localhost`, `127.0.0.1` or `[::1]` (any port) — a browser on another machine, or a
 *   DNS-rebinding page, sends another host;
 * - `x-forwarded-for` is present and every address in it is loopback (127.0.0.0/8, ::1,
 *   ::ffff:127.x) — a reverse proxy in front appends the real client;
 * - `x-forwarded-host`, when present, is a loopback host too;
 * - `Origin`, when present, is a loopback origin, and `Sec-Fetch-Site`, when present, is
 *   `same-origin` or `none` — a page on another site cannot drive the workshop through the
 *   presenter's browser.
 * **Residual risk**: because Next keeps a client-supplied `x-forwarded-for`, a non-browser client
 * that reaches the port directly from another machine can forge all of these headers. When the
 * port is reachable from other machines, set `WORKSHOP_TOKEN` (or bind with `next start -H 127.0.0.1`).
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** What the rule needs from the configuration. */
export interface AccessConfig {
  mode: "embedded" | "real";
  WORKSHOP_TOKEN?: string;
}

/** The decision for one request. */
export type AccessDecision =
  | { ok: true; reason: "token" | "embedded" | "local" }
  | { ok: false; status: 401 | 403; error: "unauthorized" | "forbidden"; detail: string };

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Host part of a `Host` header value (`localhost:3000` → `localhost`, `[::1]:3000` → `[::1]`). */
export function hostOnly(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end > 0 ? h.slice(0, end + 1) : h;
  }
  const i = h.lastIndexOf(":");
  return i >= 0 && h.indexOf(":") === i ? h.slice(0, i) : h;
}

/** Whether an address (from `x-forwarded-for`) is loopback. */
export function isLoopbackAddress(addr: string): boolean {
  const a = addr.trim().toLowerCase().replace(/^\[|\]$/g, "");
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true;
  const v4 = a.startsWith("::ffff:") ? a.slice(7) : a;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v4);
  return m !== null && m[1] === "127" && m.slice(1).every((x) => Number(x) <= 255);
}

function isLoopbackHost(host: string | null): boolean {
  return host !== null && LOOPBACK_HOSTS.has(hostOnly(host));
}

/** Whether the request comes from this machine (see the module doc for what is checked). */
export function isLocalRequest(headers: Headers): boolean {
  if (!isLoopbackHost(headers.get("host"))) return false;
  const xff = headers.get("x-forwarded-for");
  if (xff === null || xff.trim() === "") return false;
  if (!xff.split(",").every(isLoopbackAddress)) return false;
  const xfh = headers.get("x-forwarded-host");
  if (xfh !== null && !isLoopbackHost(xfh)) return false;
  const origin = headers.get("origin");
  if (origin !== null) {
    try {
      if (!LOOPBACK_HOSTS.has(new URL(origin).hostname.toLowerCase())) return false;
    } catch {
      return false; // "null" or garbage
    }
  }
  const site = headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  return true;
}

/** Constant-time comparison of two strings (hashes first, so the length does not leak either). */
export function tokensEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a, "utf8").digest();
  const hb = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(ha, hb);
}

/** Applies the access rule of the module doc to a request's headers. */
export function checkAccess(headers: Headers, c: AccessConfig): AccessDecision {
  if (c.WORKSHOP_TOKEN) {
    const auth = headers.get("authorization");
    const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
    if (!m) return { ok: false, status: 401, error: "unauthorized", detail: "this endpoint needs Authorization: Bearer <WORKSHOP_TOKEN>" };
    if (!tokensEqual(m[1]!.trim(), c.WORKSHOP_TOKEN)) return { ok: false, status: 401, error: "unauthorized", detail: "wrong token: send Authorization: Bearer <WORKSHOP_TOKEN>" };
    return { ok: true, reason: "token" };
  }
  if (c.mode === "embedded") return { ok: true, reason: "embedded" };
  if (isLocalRequest(headers)) return { ok: true, reason: "local" };
  return {
    ok: false,
    status: 403,
    error: "forbidden",
    detail: "state-changing endpoints are open only to requests from this machine (Host localhost) unless WORKSHOP_TOKEN is set; set it and send Authorization: Bearer <token>",
  };
}
