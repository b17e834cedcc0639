/**
 * Who may call the endpoints that change state (workshop runs, demo sources, demo faults).
 *
 * The rule, the same in embedded and real mode (a foreign `Host`, cross-site callers and non-JSON
 * bodies are refused before this by proxy.ts — see server/allowed-hosts.ts and
 * {@link crossSiteRefusal}):
 * 1. `WORKSHOP_TOKEN` set → `Authorization: Bearer <token>` is required from anywhere (compared in
 *    constant time); missing or wrong → 401.
 * 2. Otherwise only requests from this machine → else 403. A server listening beyond loopback
 *    without a token is therefore **read-only**, an embedded demo included (said at start-up by
 *    {@link accessSummary}): its faults, traffic rate and workshop runs are as much a resource as
 *    real mode's.
 *
 * ## How "from this machine" is decided
 * Next.js gives neither proxy.ts nor route handlers the socket's remote address: its server only
 * copies it into `x-forwarded-for` when the request has none (base-server.js:
 * `headers['x-forwarded-for'] ??= socket.remoteAddress`), so a client-supplied value is
 * indistinguishable from Next's own. Without a custom server the one address the app can be sure
 * of is the one it listens on. So a request counts as local only when ALL of these hold:
 * - the server is bound to a loopback address (`next start -H 127.0.0.1`, what `npm start` does
 *   unless `HOST` is set) — then every peer socket is on this machine; bound to `0.0.0.0` or an
 *   external address nothing is local, since any header can be forged from another machine;
 * - `Host` is `localhost`, `127.0.0.1` or `[::1]` (any port) — not a DNS-rebinding page;
 * - no forwarding header: `X-Real-IP` and `Forwarded` absent, `X-Forwarded-For` only Next's own
 *   copy of the (loopback) peer address — one loopback entry — and `X-Forwarded-Host`, which
 *   Next sets to `Host`, equal to it. A client behind a reverse proxy is never local, trusted proxy
 *   or not: a loopback address in a forwarding header is the proxy's machine or the client's claim,
 *   not this socket's peer. `TRUSTED_PROXIES` and its one header `TRUSTED_PROXY_HEADER` decide the
 *   client's address ({@link clientAddress}) and whether proxy-mode identity headers are believed
 *   ({@link fromTrustedProxy}), never locality;
 * - `Origin`, when present, is a loopback origin, and `Sec-Fetch-Site`, when present, is
 *   `same-origin` or `none`.
 * **Residual risk**: a reverse proxy on this machine that sends no forwarding header at all (nginx's
 * default), or passes the client's `X-Forwarded-For` on unchanged instead of appending to it
 * (`$proxy_add_x_forwarded_for`), looks like a local client; behind any proxy, set `WORKSHOP_TOKEN`
 * or `AUTH_MODE=proxy`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { DEFAULT_PROXY_HEADER, isLoopbackAddress, isLoopbackHost, LOOPBACK_HOSTS } from "./client-address";

export {
  clientAddress,
  DEFAULT_PROXY_HEADER,
  FORWARDING_HEADERS,
  forwardedChain,
  fromTrustedProxy,
  hostOnly,
  isLoopbackAddress,
} from "./client-address";

/** What the rule needs from the configuration. */
export interface AccessConfig {
  mode: "embedded" | "real";
  WORKSHOP_TOKEN?: string;
  /** Addresses of reverse proxies whose forwarding header is believed. @default [] */
  TRUSTED_PROXIES?: readonly string[];
  /** The one header those proxies report the client in. @default "x-forwarded-for" */
  TRUSTED_PROXY_HEADER?: string;
  /** Where users come from (server/auth/principal.ts); only the start-up summary reads it here. @default "token" */
  AUTH_MODE?: "token" | "proxy" | "oidc";
}

/** Where the server listens, as far as the rule needs it. */
export interface ListenInfo {
  /** The server is bound to a loopback address only. */
  loopback: boolean;
}

/** The decision for one request. */
export type AccessDecision =
  | { ok: true; reason: "token" | "local" }
  | { ok: false; status: 401 | 403; error: "unauthorized" | "forbidden"; detail: string };

/** Largest request body a state-changing route reads (proxy.ts refuses a larger Content-Length: 413). */
export const MAX_BODY_BYTES = 16_384;

/**
 * The host the server was told to listen on: `-H`/`--hostname` of `next start`/`next dev` (they run
 * in this process), else the origin Next records once listening (`__NEXT_PRIVATE_ORIGIN`, which
 * names the host only when one was given). `null`: all interfaces (Next's default).
 */
export function listenHost(
  argv: readonly string[] = process.argv,
  env: Record<string, string | undefined> = process.env,
): string | null {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === "-H" || a === "--hostname") && argv[i + 1]) return argv[i + 1]!;
    const m = /^(?:--hostname=|-H)(.+)$/.exec(a);
    if (m) return m[1]!;
  }
  try {
    const h = env.__NEXT_PRIVATE_ORIGIN ? new URL(env.__NEXT_PRIVATE_ORIGIN).hostname : "";
    if (h === "127.0.0.1" || h === "[::1]") return h;
  } catch {
    /* not a URL */
  }
  return null;
}

/** {@link ListenInfo} of this process. */
export function listenInfo(argv?: readonly string[], env?: Record<string, string | undefined>): ListenInfo {
  const h = listenHost(argv, env);
  return { loopback: h !== null && (isLoopbackHost(h) || isLoopbackAddress(h)) };
}

/**
 * Whether the request comes from this machine (see the module doc for what is checked). Only the
 * socket's own loopback peer is local: `x-forwarded-for` must be Next's one copy of it and no other
 * forwarding header may be present — a loopback address a proxy reports is the proxy's machine or
 * the client's claim, never this socket, whatever `TRUSTED_PROXIES` says.
 */
export function isLocalRequest(
  headers: Headers,
  listen: ListenInfo = listenInfo(),
  header: string = DEFAULT_PROXY_HEADER,
): boolean {
  if (!listen.loopback) return false;
  const host = headers.get("host");
  if (!isLoopbackHost(host)) return false;
  const xfh = headers.get("x-forwarded-host");
  if (xfh !== null && xfh.trim().toLowerCase() !== host!.trim().toLowerCase()) return false;
  const xff = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  if (xff.length !== 1 || !isLoopbackAddress(xff[0]!)) return false; // Next always sets it: none means the request did not come through Next's server
  if (headers.has("x-real-ip") || headers.has("forwarded")) return false;
  if (header.toLowerCase() !== DEFAULT_PROXY_HEADER && headers.has(header)) return false;
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

/**
 * Why a state-changing request is refused as cross-site (403), or `null`: `Sec-Fetch-Site:
 * cross-site`/`same-site`, or an `Origin` (including `null`) whose host is not the request's `Host`.
 * Applies in every mode, before the token (a browser on another site may hold no token, but a
 * presenter's browser in embedded mode needs none).
 */
export function crossSiteRefusal(headers: Headers): string | null {
  const site = headers.get("sec-fetch-site");
  if (site === "cross-site" || site === "same-site")
    return `Sec-Fetch-Site: ${site} — state-changing requests are accepted only from this app's own pages`;
  const origin = headers.get("origin");
  if (origin === null) return null;
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    return `Origin ${origin === "null" ? "null" : "is not a URL"} — state-changing requests are accepted only from this app's own pages`;
  }
  const own = [headers.get("host"), headers.get("x-forwarded-host")]
    .filter((x): x is string => !!x)
    .map((x) => x.trim().toLowerCase());
  return own.includes(originHost)
    ? null
    : "Origin is another site — state-changing requests are accepted only from this app's own pages";
}

/** Constant-time comparison of two strings (hashes first, so the length does not leak either). */
export function tokensEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a, "utf8").digest();
  const hb = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(ha, hb);
}

/** Applies the access rule of the module doc to a request's headers. */
export function checkAccess(headers: Headers, c: AccessConfig, listen: ListenInfo = listenInfo()): AccessDecision {
  if (c.WORKSHOP_TOKEN) {
    const auth = headers.get("authorization");
    const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
    if (!m)
      return {
        ok: false,
        status: 401,
        error: "unauthorized",
        detail: "this endpoint needs Authorization: Bearer <WORKSHOP_TOKEN>",
      };
    if (!tokensEqual(m[1]!.trim(), c.WORKSHOP_TOKEN))
      return {
        ok: false,
        status: 401,
        error: "unauthorized",
        detail: "wrong token: send Authorization: Bearer <WORKSHOP_TOKEN>",
      };
    return { ok: true, reason: "token" };
  }
  if (!listen.loopback) {
    return {
      ok: false,
      status: 403,
      error: "forbidden",
      detail:
        "read-only: the server listens beyond loopback and WORKSHOP_TOKEN is not set; set it and send Authorization: Bearer <token>",
    };
  }
  if (isLocalRequest(headers, listen, c.TRUSTED_PROXY_HEADER)) return { ok: true, reason: "local" };
  return {
    ok: false,
    status: 403,
    error: "forbidden",
    detail:
      "state-changing endpoints are open only to requests from this machine (Host localhost, no forwarding header) unless WORKSHOP_TOKEN is set; set it and send Authorization: Bearer <token>",
  };
}

/** The start-up line saying who may change state, e.g. `read-only: listening beyond loopback…`. */
export function accessSummary(
  c: AccessConfig,
  listen: ListenInfo = listenInfo(),
  host: string | null = listenHost(),
): string {
  const where = host ?? "0.0.0.0 (all interfaces)";
  if (c.AUTH_MODE === "proxy")
    return `proxy mode: users are who ${c.TRUSTED_PROXIES?.join(", ")} name (the last ${c.TRUSTED_PROXY_HEADER ?? DEFAULT_PROXY_HEADER} hop must be one of them; make the app reachable only through them), roles from ROLE_BINDINGS; everyone else reads, anonymous (listening on ${where})`;
  if (c.AUTH_MODE === "oidc")
    return `oidc mode: users sign in; roles from ROLE_BINDINGS; everyone else reads, anonymous (listening on ${where})`;
  const mode = `${c.mode} mode`;
  if (c.WORKSHOP_TOKEN)
    return `${mode}: state-changing endpoints need Authorization: Bearer <WORKSHOP_TOKEN> (listening on ${where})`;
  if (!listen.loopback)
    return `read-only: listening on ${where} beyond loopback without WORKSHOP_TOKEN (${mode}), every state-changing endpoint answers 403; set WORKSHOP_TOKEN to enable them`;
  return `${mode}: state-changing endpoints are open to requests from this machine only, without forwarding headers (listening on ${where})${c.TRUSTED_PROXIES?.length ? `; trusted proxies ${c.TRUSTED_PROXIES.join(", ")}` : ""}`;
}
