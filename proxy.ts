import { NextResponse, type NextRequest } from "next/server";
import type { ErrorBody } from "@/lib/api/common";
import { pageCsp } from "@/lib/csp";
import { routeName } from "@/lib/route-params";
import { ROUTER_STATE_REFUSED_DETAIL } from "@/lib/router-state-pattern";
import { crossSiteRefusal, MAX_BODY_BYTES } from "@/server/access";
import { hostRefusal, processAllowList } from "@/server/allowed-hosts";
import { config as appConfig } from "@/server/config";

/** Methods that never change state: the cross-site / content-type / size guard skips them. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Headers of every answer the proxy writes itself (next.config.js' headers cover the rest). */
const OWN_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Cache-Control": "no-store",
  "Referrer-Policy": "strict-origin-when-cross-origin",
  "X-Frame-Options": "DENY",
};

/** The page CSP (lib/csp.js, shared with next.config.js), re-exported for the tests. */
export { pageCsp };

function refuse(status: number, error: ErrorBody["error"], detail: string): NextResponse {
  return NextResponse.json({ error, detail } satisfies ErrorBody, {
    status,
    headers: { ...OWN_HEADERS, "Content-Security-Policy": pageCsp(null) },
  });
}

/** The page a browser shows for a refused Host: plain, no script, nothing of the request echoed. */
const HOST_REFUSED_PAGE = `<!doctype html><meta charset="utf-8"><title>403 Forbidden</title><h1>403 Forbidden</h1><p>This server does not answer to the name in the address bar. If the name is yours, add it to ALLOWED_HOSTS.</p>`;

/**
 * The not-found page of a handler address whose names are no names, written here: a rewrite to
 * Next's `/_not-found` became, on a loopback bind, a second HTTP connection from the server to
 * itself (the rewrite's origin is not the one Next listens as), and any failure of it a plain 500.
 * Plain, no script, nothing of the request echoed; the app's own not-found page says the same.
 */
const NOT_FOUND_PAGE = `<!doctype html><meta charset="utf-8"><title>Not found · dedup-health</title><h1>Not found</h1><p>There is no page at this address: a service or handler name has characters no name has.</p><p><a href="/">Back to the overview</a></p>`;

/**
 * Refuses a request whose `Host` is not on the allow-list (server/allowed-hosts.ts): 403 `{ error,
 * detail }` for `/api/*`, a plain page otherwise. `null` when the Host is allowed.
 */
export function hostRefusalResponse(path: string, headers: Headers): NextResponse | null {
  const why = hostRefusal(headers.get("host"), processAllowList(appConfig().ALLOWED_HOSTS));
  if (!why) return null;
  if (path.startsWith("/api/")) return refuse(403, "forbidden", why);
  return new NextResponse(HOST_REFUSED_PAGE, {
    status: 403,
    headers: { ...OWN_HEADERS, "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": pageCsp(null) },
  });
}

/**
 * Guards every state-changing API request, in every mode, before any route reads it (issue 16):
 * a cross-site caller (`Sec-Fetch-Site: cross-site`/`same-site`, or an `Origin` that is not this
 * app's) → 403; a `Content-Length` above {@link MAX_BODY_BYTES} → 413, a chunked body without one → 411; a content type other than
 * JSON → 415 (an HTML form cannot send one), except a DELETE without a body (always preflighted
 * cross-origin). `null` when the request may go on.
 */
export function stateChangeRefusal(method: string, path: string, headers: Headers): NextResponse | null {
  if (SAFE_METHODS.has(method.toUpperCase()) || !path.startsWith("/api/")) return null;
  const cross = crossSiteRefusal(headers);
  if (cross) return refuse(403, "forbidden", cross);
  const length = headers.get("content-length");
  // A streamed body of unknown size: Next would buffer up to 10 MB of it for this proxy before any check.
  if (length === null && headers.has("transfer-encoding"))
    return refuse(
      411,
      "length_required",
      "send the body with a Content-Length (at most 16384 bytes); chunked bodies are not accepted",
    );
  if (length !== null && !(/^\d+$/.test(length.trim()) && Number(length) <= MAX_BODY_BYTES)) {
    return refuse(
      413,
      "payload_too_large",
      `body: Content-Length ${length.slice(0, 20)} is above the ${MAX_BODY_BYTES}-byte limit`,
    );
  }
  // A DELETE without a body (`DELETE /api/silences/<id>`, as amtool or curl send it) needs no JSON
  // type: no form or other simple request can send a DELETE, so it always takes a CORS preflight.
  if (method.toUpperCase() === "DELETE" && (length === null || length.trim() === "0")) return null;
  const type = (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json")
    return refuse(
      415,
      "unsupported_media_type",
      "send Content-Type: application/json (state-changing endpoints take a JSON body, possibly empty)",
    );
  return null;
}

/**
 * 0. {@link hostRefusalResponse}: a foreign `Host` (DNS rebinding) → 403, before anything else runs
 *    (except the probes `GET /healthz` and `GET /readyz`: {@link isProbe}).
 * 1. Answers 400 `{ error, detail }` for a request path with an invalid percent-encoding (e.g.
 *    `/handlers/%/x`): Next.js 16 would try to render a `/_error` page that an App-Router-only build
 *    does not have, and answer a bare 500 instead.
 * 2. A path with a trailing slash → 308 to the path without it, with these headers (Next.js' own
 *    redirect is off: it answered before this proxy ran).
 * 3. {@link stateChangeRefusal}; a page requested with another method than GET/HEAD → 405.
 * 4. Pages: a handler path whose names are no names → a plain not-found page (404), written
 *    here; a fresh nonce per
 *    request, in the CSP of the answer and (for Next's renderer and the layout, as `x-nonce`) of
 *    the request.
 */
export function proxy(req: NextRequest): NextResponse {
  const raw = new URL(req.url).pathname;
  if (isProbe(req.method, raw)) {
    // Whatever the Host (a load balancer probes by a name not on the allow-list), with the API's headers.
    const probe = NextResponse.next();
    probe.headers.set("Content-Security-Policy", pageCsp(null));
    return probe;
  }
  const foreign = hostRefusalResponse(raw, req.headers);
  if (foreign) return foreign;
  // The build's static files: the Host check only (their headers come from next.config.js); they
  // are read, never written (Next's static handler answered 500 to any other method).
  if (raw.startsWith("/_next/static/") || raw.startsWith("/_next/image")) {
    if (req.method === "GET" || req.method === "HEAD") return NextResponse.next();
    const res = refuse(405, "method_not_allowed", "the build's static files answer GET and HEAD only");
    res.headers.set("Allow", "GET, HEAD");
    return res;
  }
  if (raw.includes("%")) {
    for (const segment of raw.split("/")) {
      try {
        decodeURIComponent(segment);
      } catch {
        return refuse(400, "bad_request", "the request path has an invalid percent-encoding");
      }
    }
  }
  // A client-router request with an empty router state: Next's renderer fails to parse it (a plain
  // 500 on every page), and next.config.js' rewrites cannot refuse it (a `has` rule skips an empty
  // value). proxy.ts sees the header because next.config.js sets `skipProxyUrlNormalize`.
  if (req.headers.get("rsc") === "1" && req.headers.get("next-router-state-tree")?.trim() === "")
    return refuse(400, "bad_request", ROUTER_STATE_REFUSED_DETAIL);
  if (raw.length > 1 && raw.endsWith("/")) {
    const to = new URL(req.url);
    to.pathname = raw.replace(/\/+$/, "") || "/";
    return NextResponse.redirect(to, {
      status: 308,
      headers: { ...OWN_HEADERS, "Content-Security-Policy": pageCsp(null) },
    });
  }
  const refused = stateChangeRefusal(req.method, raw, req.headers);
  if (refused) return refused;
  // Pages take no body (the app has no server actions): refused before Next.js buffers one for a renderer.
  if (!raw.startsWith("/api/") && req.method !== "GET" && req.method !== "HEAD") {
    const res = refuse(405, "method_not_allowed", "pages answer GET and HEAD only");
    res.headers.set("Allow", "GET, HEAD");
    return res;
  }
  if (raw.startsWith("/api/")) {
    const api = NextResponse.next();
    api.headers.set("Content-Security-Policy", pageCsp(null));
    return api;
  }
  // A handler page whose names, decoded once, are no names (`%25zz` → `%zz`, `%2525` → `%25`): 404
  // here (the page's own notFound() would come after its 200 streamed).
  if (badHandlerPath(raw))
    return new NextResponse(req.method === "HEAD" ? null : NOT_FOUND_PAGE, {
      status: 404,
      headers: { ...OWN_HEADERS, "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": pageCsp(null) },
    });
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const csp = pageCsp(nonce);
  const headers = new Headers(req.headers);
  headers.set("x-nonce", nonce);
  headers.set("content-security-policy", csp);
  const res = NextResponse.next({ request: { headers } });
  res.headers.set("Content-Security-Policy", csp);
  return res;
}

/** The probe endpoints (app/healthz, app/readyz). */
const PROBE_PATHS = new Set(["/healthz", "/readyz"]);

/**
 * Whether the request is a liveness or readiness probe, which no check of this proxy refuses: a
 * load balancer or orchestrator probes with the `Host` it knows (a container name, a pod IP behind
 * NAT), not one on the allow-list. Safe to let through: read-only, and the answers hold no data
 * (`/readyz`'s reasons are redacted failure kinds).
 */
export function isProbe(method: string, path: string): boolean {
  return PROBE_PATHS.has(path) && (method === "GET" || method === "HEAD");
}

/** Whether `path` is a handler page's whose service or handler, decoded once, is no name (lib/route-params.ts). */
function badHandlerPath(path: string): boolean {
  if (!path.startsWith("/handlers/")) return false;
  return path
    .split("/")
    .slice(2)
    .some((seg) => routeName(decodeURIComponent(seg)) === null);
}

export const config = {
  // Every request, the build's static files included (for the Host check).
  matcher: ["/:path*"],
};
