/**
 * What a request's headers say about where it came from: the host part of `Host`, loopback
 * addresses, the chain of one forwarding header, whether its last hop is a trusted proxy and the
 * client's address. server/access.ts decides locality and access from these (and re-exports them).
 */

/** Headers by which a proxy reports the client: any of them makes a request non-local unless trusted. */
export const FORWARDING_HEADERS = ["x-forwarded-for", "x-real-ip", "forwarded"] as const;

/** The `Host` names (port stripped) and URL hostnames of this machine. */
export const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

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

function bare(addr: string): string {
  return addr
    .trim()
    .toLowerCase()
    .replace(/^"|"$/g, "")
    .replace(/^\[|\](:\d+)?$/g, "");
}

/** Whether an address (from `x-forwarded-for`) is loopback. */
export function isLoopbackAddress(addr: string): boolean {
  const a = bare(addr);
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true;
  const v4 = a.startsWith("::ffff:") ? a.slice(7) : a;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v4);
  return m !== null && m[1] === "127" && m.slice(1).every((x) => Number(x) <= 255);
}

/** Whether a `Host` header value names this machine (any port). */
export function isLoopbackHost(host: string | null): boolean {
  return host !== null && LOOPBACK_HOSTS.has(hostOnly(host));
}

function forwardedFor(v: string): string[] {
  // RFC 7239: `for=192.0.2.1;proto=http, for="[2001:db8::1]:4711"`.
  return [...v.matchAll(/for=("[^"]*"|[^;,\s]+)/gi)].map((m) => bare(m[1]!));
}

/** The header a trusted proxy reports the client in, when none is configured (`TRUSTED_PROXY_HEADER`). */
export const DEFAULT_PROXY_HEADER = "x-forwarded-for";

/** The addresses one forwarding header lists, left (first hop) to right (last hop). */
export function forwardedChain(headers: Headers, header: string = DEFAULT_PROXY_HEADER): string[] {
  const name = header.toLowerCase();
  const v = headers.get(name) ?? "";
  return name === "forwarded" ? forwardedFor(v) : v.split(",").map(bare).filter(Boolean);
}

/**
 * Whether the request's last hop was a trusted proxy: the right-most entry of the ONE configured
 * header (`header`, `TRUSTED_PROXY_HEADER`) is in `trusted`. Next.js copies the socket's peer into
 * `x-forwarded-for` only when the request has none, so this is what the last hop wrote, not a
 * socket fact: **only a proxy the app alone is reachable through makes it true** (SECURITY.md).
 */
export function fromTrustedProxy(
  headers: Headers,
  trusted: readonly string[],
  header: string = DEFAULT_PROXY_HEADER,
): boolean {
  const chain = forwardedChain(headers, header);
  const t = new Set(trusted.map(bare));
  return chain.length > 0 && t.has(chain[chain.length - 1]!);
}

/**
 * The client's address as the request tells it: the right-most entry of the ONE configured header
 * (`header`, default `x-forwarded-for`) that is not a `trusted` proxy; the left-most when every
 * entry is trusted; `null` when the header names none. Every other forwarding header (`X-Real-IP`,
 * `Forwarded`, …) is ignored, so a client cannot pick the header that suits it.
 */
export function clientAddress(
  headers: Headers,
  trusted: readonly string[] = [],
  header: string = DEFAULT_PROXY_HEADER,
): string | null {
  const chain = forwardedChain(headers, header);
  const t = new Set(trusted.map(bare));
  for (let i = chain.length - 1; i >= 0; i--) if (!t.has(chain[i]!)) return chain[i]!;
  return chain[0] ?? null;
}
