/**
 * Which `Host` names the app answers to, in every mode and for every request (pages, API, GET
 * included): the defence against DNS rebinding. A page on `evil.example` whose name is re-pointed at
 * 127.0.0.1 (or at this machine's address) makes the viewer's browser send `Host: evil.example` to
 * this server, same-origin from the page's point of view, so `Origin` checks pass; only the `Host`
 * tells the request apart. proxy.ts refuses any other `Host` with 403 before a route or page runs.
 *
 * Allowed, any port:
 * - loopback names and addresses: `localhost`, `127.0.0.1`, `[::1]` — always;
 * - the address the server binds (`-H`/`HOST`), and, when that is beyond loopback (`0.0.0.0`, an
 *   external address, or no `-H`), this machine's host name and the addresses of its interfaces —
 *   what a client on the network types. An IP literal cannot be rebound: no other site's page has
 *   that origin;
 * - `ALLOWED_HOSTS` (server/config.ts): names added to the above, e.g. the name a reverse proxy
 *   forwards; `.example.com` also allows every sub-domain of example.com.
 */
import { hostname, networkInterfaces } from "node:os";
import { hostOnly, isLoopbackAddress, listenHost } from "@/server/access";

/** Loopback names the app always answers to. */
export const LOOPBACK_HOST_NAMES = ["localhost", "127.0.0.1", "[::1]"] as const;

/** A compiled allow-list: exact names (lower case, IPv6 in brackets) and `.suffix` patterns. */
export interface HostAllowList {
  exact: ReadonlySet<string>;
  /** `.example.com`: example.com and any name ending in `.example.com`. */
  suffixes: readonly string[];
}

/** `::1` → `[::1]`; names and IPv4 lower-cased; a trailing dot and an IPv6 zone id removed. */
export function normalHost(h: string): string {
  let x = h.trim().toLowerCase().replace(/\.$/, "");
  if (x.startsWith("[") && x.endsWith("]")) x = x.slice(1, -1);
  if (x.includes(":")) return `[${x.replace(/%.*$/, "")}]`;
  return x;
}

/** This machine's host name and interface addresses (IPv6 in brackets, link-local left out). */
export function machineHosts(): string[] {
  const out = new Set<string>();
  const name = hostname();
  if (name) out.add(normalHost(name));
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === "IPv6" && a.address.toLowerCase().startsWith("fe80:")) continue;
      out.add(normalHost(a.address));
    }
  }
  return [...out];
}

/**
 * The allow-list of the module doc. `bind` is the host the server listens on (`null`: all
 * interfaces); `extra` is `ALLOWED_HOSTS`; `machine` this machine's names (injectable for tests).
 */
export function allowList(
  bind: string | null,
  extra: readonly string[] = [],
  machine: () => string[] = machineHosts,
): HostAllowList {
  const exact = new Set<string>(LOOPBACK_HOST_NAMES);
  const suffixes: string[] = [];
  const beyondLoopback =
    bind === null ||
    (!(LOOPBACK_HOST_NAMES as readonly string[]).includes(normalHost(bind)) && !isLoopbackAddress(bind));
  if (bind !== null && !["0.0.0.0", "[::]"].includes(normalHost(bind))) exact.add(normalHost(bind));
  if (beyondLoopback) for (const m of machine()) exact.add(m);
  for (const e of extra) {
    if (e.startsWith(".")) suffixes.push(normalHost(e.slice(1)));
    else exact.add(normalHost(e));
  }
  return { exact, suffixes };
}

/** Whether a `Host` header value (with or without a port) is on `list`. A missing Host is not. */
export function hostAllowed(host: string | null, list: HostAllowList): boolean {
  if (!host) return false;
  const h = normalHost(hostOnly(host));
  if (list.exact.has(h)) return true;
  return list.suffixes.some((s) => h === s || h.endsWith(`.${s}`));
}

/** The allow-list of this process (bind from argv / Next's origin, `ALLOWED_HOSTS` from the config), built once. */
export function processAllowList(extra: readonly string[]): HostAllowList {
  const g = globalThis as typeof globalThis & { __dedupHealthHosts?: { key: string; list: HostAllowList } };
  const bind = listenHost();
  const key = `${bind}|${extra.join(",")}`;
  if (g.__dedupHealthHosts?.key !== key) g.__dedupHealthHosts = { key, list: allowList(bind, extra) };
  return g.__dedupHealthHosts.list;
}

/** Why a request's `Host` is refused (for the 403's detail), or `null` when it is allowed. */
export function hostRefusal(host: string | null, list: HostAllowList): string | null {
  if (hostAllowed(host, list)) return null;
  return host
    ? "this server does not answer to the Host of the request (a DNS-rebinding page sends its own name); add the name to ALLOWED_HOSTS if it is yours"
    : "the request has no Host header";
}
