/**
 * `AUTH_MODE=proxy`: the user an authenticating reverse proxy (oauth2-proxy, Grafana-style auth
 * proxies) names in `PROXY_USER_HEADER` / `PROXY_EMAIL_HEADER` / `PROXY_GROUPS_HEADER`, believed
 * **only** when the request's last hop is one of `TRUSTED_PROXIES` ({@link fromTrustedProxy}).
 * The same headers from anywhere else are ignored (the request is anonymous), counted in
 * `dedup_health_untrusted_identity_headers_total` and logged.
 */
import { Counter } from "prom-client";
import { clientAddress, fromTrustedProxy } from "@/server/access";
import type { AppConfig } from "@/server/config";
import { appRegistry } from "@/server/registry";

/** What the proxy headers say of the user. */
export interface ProxyUser {
  name: string;
  email?: string;
  groups: string[];
}

/** Name of the counter of identity headers from an untrusted peer. */
export const UNTRUSTED_IDENTITY_METRIC = "dedup_health_untrusted_identity_headers_total";

/** The counter of requests that carried identity headers from a peer not in `TRUSTED_PROXIES` (get-or-create on the app registry). */
export function untrustedIdentityCounter(): Counter {
  const r = appRegistry();
  const existing = r.getSingleMetric(UNTRUSTED_IDENTITY_METRIC);
  if (existing) return existing as Counter;
  return new Counter({
    name: UNTRUSTED_IDENTITY_METRIC,
    help: "Requests that carried user identity headers (AUTH_MODE=proxy) from a peer not in TRUSTED_PROXIES; they were treated as anonymous",
    registers: [r],
  });
}

/** Longest user name, e-mail or group kept; longer values are cut. */
export const MAX_IDENTITY_CHARS = 200;
/** Most groups kept of one request. */
export const MAX_GROUPS = 100;

/** A header value as a name: control characters removed, trimmed, bounded. */
function clean(v: string | null): string {
  // eslint-disable-next-line no-control-regex
  return (v ?? "")
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, "")
    .trim()
    .slice(0, MAX_IDENTITY_CHARS);
}

let lastLog = 0;

/**
 * The user of a request in proxy mode, or null (anonymous): no user header, or the headers came
 * from a peer that is not a trusted proxy (then counted, and logged at most once a second).
 */
export function proxyIdentity(
  headers: Headers,
  c: Pick<
    AppConfig,
    "TRUSTED_PROXIES" | "TRUSTED_PROXY_HEADER" | "PROXY_USER_HEADER" | "PROXY_EMAIL_HEADER" | "PROXY_GROUPS_HEADER"
  >,
): ProxyUser | null {
  const claims = [c.PROXY_USER_HEADER, c.PROXY_EMAIL_HEADER, c.PROXY_GROUPS_HEADER].some((h) => headers.has(h));
  if (!claims) return null;
  if (!fromTrustedProxy(headers, c.TRUSTED_PROXIES, c.TRUSTED_PROXY_HEADER)) {
    untrustedIdentityCounter().inc();
    const now = Date.now();
    if (now - lastLog > 1000) {
      lastLog = now;
      const from = clientAddress(headers, c.TRUSTED_PROXIES, c.TRUSTED_PROXY_HEADER) ?? "unknown";
      console.warn(
        `[dedup-health] auth: identity headers from ${JSON.stringify(from)}, not a TRUSTED_PROXIES peer: ignored, the request is anonymous`,
      );
    }
    return null;
  }
  const name = clean(headers.get(c.PROXY_USER_HEADER));
  if (name === "") return null;
  const email = clean(headers.get(c.PROXY_EMAIL_HEADER));
  const groups = [
    ...new Set(
      (headers.get(c.PROXY_GROUPS_HEADER) ?? "")
        .split(",")
        .map((g) => clean(g))
        .filter(Boolean),
    ),
  ].slice(0, MAX_GROUPS);
  return { name, ...(email ? { email } : {}), groups };
}
