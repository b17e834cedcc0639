/**
 * The one redaction of upstream error text: what an API answer says about a failing
 * upstream names the component and the kind of failure, never a URL's userinfo, path, query or
 * the internal host. Used by every place an error names an upstream (every route's answer through
 * `server/http.ts`, `/api/health` included) and by the upstream clients' own messages (Prometheus, Redis).
 *
 * Two layers:
 * 1. every configured value (`PROMETHEUS_URL`, `ALERTMANAGER_URL`, `REDIS_URL`, `REDIS_CLUSTER_NODES`, `DATABASE_URL`,
 *    `INBOX_DATABASE_URL`, `KAFKA_BROKERS`) is replaced by its component name wherever it, its host, its `host:port`, its
 *    userinfo or its password appears;
 * 2. whatever still looks like a URL, `user:pass@`, an IP address, a `host:port` or a database
 *    user named in quotes (`user "x"`, `role "x"`) is replaced by a
 *    placeholder — so an address the config does not name (a Cluster node, a broker the bootstrap
 *    list led to, a DNS name in a kafkajs message) is hidden too.
 */

/** The configured upstream targets, as strings (the shape of `AppConfig`'s fields). */
export interface UpstreamTargets {
  PROMETHEUS_URL?: string;
  ALERTMANAGER_URL?: string;
  REDIS_URL?: string;
  REDIS_CLUSTER_NODES?: readonly string[];
  DATABASE_URL?: string;
  INBOX_DATABASE_URL?: string;
  KAFKA_BROKERS?: readonly string[];
}

/** What replaces a hidden URL, address or credential. */
export const REDACTED = "<redacted>";

const COMPONENT: Record<keyof UpstreamTargets, string> = {
  PROMETHEUS_URL: "prometheus",
  ALERTMANAGER_URL: "alertmanager",
  REDIS_URL: "redis",
  REDIS_CLUSTER_NODES: "redis",
  DATABASE_URL: "postgres",
  INBOX_DATABASE_URL: "postgres",
  KAFKA_BROKERS: "kafka",
};

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Fragments of one configured value that must never be shown, longest first; `hosts` collects its bare host names. */
function fragmentsOf(value: string, hosts: Set<string>): string[] {
  const out = new Set<string>([value]);
  try {
    const u = new URL(value);
    const raw = (s: string) => {
      if (s) out.add(s);
      try {
        const d = decodeURIComponent(s);
        if (d) out.add(d);
      } catch {
        /* keep the raw form only */
      }
    };
    raw(u.password);
    if (u.username && u.password) out.add(`${u.username}:${u.password}`);
    // PostgreSQL names its user in quotes (`password authentication failed for user "app"`,
    // `role "app" does not exist`): the quoted name, never the bare word (it may be "dedup").
    if (u.username) out.add(`"${decodeURIComponent(u.username)}"`);
    out.add(u.host);
    hosts.add(u.hostname.toLowerCase());
    hosts.add(u.hostname.replace(/^\[|\]$/g, "").toLowerCase());
    if (u.search.length > 1) out.add(u.search.slice(1));
    out.add(`${u.protocol}//${u.host}`);
  } catch {
    // host:port
    const i = value.lastIndexOf(":");
    if (i > 0) hosts.add(value.slice(0, i).toLowerCase());
  }
  // Short fragments (a one-letter password, "db") would eat unrelated words.
  return [...out].filter((f) => f.length >= 3).sort((a, b) => b.length - a.length);
}

/**
 * Every (fragment, label) pair of `targets`, longest fragment first. A bare host name (no port) is
 * labelled `host`, not by a component: several upstreams often share one (127.0.0.1), and a host
 * met alone (a consumer group member's address) is no component's.
 */
function configuredFragments(targets: UpstreamTargets): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const hosts = new Set<string>();
  for (const k of Object.keys(COMPONENT) as Array<keyof UpstreamTargets>) {
    const v = targets[k];
    const values = typeof v === "string" ? [v] : (v ?? []);
    for (const x of values) for (const f of fragmentsOf(x, hosts)) pairs.push([f, COMPONENT[k]]);
  }
  for (const h of hosts) if (h.length >= 3) pairs.push([h, "host"]);
  return pairs.sort((a, b) => b[0].length - a[0].length);
}

// A URL with a scheme (http, redis, postgres, kafka…), up to whitespace, a quote or a closing bracket.
const URL_RE = /\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s"'<>)\]]+/gi;
// user:pass@ left over outside a URL.
const USERINFO_RE = /\b[^\s:/@"']+:[^\s/@"']*@/g;
// [v6]:port, v4(:port), host.name(:port), localhost(:port).
const IPV6_RE = /\[[0-9a-f:.]+\](?::\d{1,5})?/gi;
const IPV4_RE = /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g;
const HOST_PORT_RE = /\b(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+):\d{1,5}\b/gi;
// A database user or role a server's message names (PostgreSQL: `for user "x"`, `role "x"`).
const DB_USER_RE = /\b(user|role) "[^"]{1,128}"/gi;
const DOTTED_HOST_RE =
  /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:local|internal|invalid|lan|svc|cluster|com|net|org|io|cloud)\b/gi;

/**
 * Returns `text` with every configured upstream value (see the module doc) replaced by its
 * component name and every other URL, userinfo, IP address or host:port replaced by
 * {@link REDACTED}. Idempotent; never throws.
 */
export function redact(text: string, targets: UpstreamTargets = {}): string {
  let out = text;
  for (const [frag, component] of configuredFragments(targets)) {
    out = out.replace(new RegExp(escapeRe(frag), "gi"), `<${component}>`);
  }
  return out
    .replace(URL_RE, REDACTED)
    .replace(USERINFO_RE, `${REDACTED}@`)
    .replace(IPV6_RE, REDACTED)
    .replace(IPV4_RE, REDACTED)
    .replace(HOST_PORT_RE, REDACTED)
    .replace(DOTTED_HOST_RE, REDACTED)
    .replace(DB_USER_RE, `$1 "${REDACTED}"`);
}

/** The kind of a network/upstream failure, from Node's and the clients' error codes and texts. */
export function failureKind(e: unknown): string {
  const err = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown } | null;
  const codes = [err?.code, (err?.cause as { code?: unknown } | undefined)?.code].filter(
    (c): c is string => typeof c === "string",
  );
  const text = `${String(err?.name ?? "")} ${String(err?.message ?? e)} ${codes.join(" ")}`;
  if (/ECONNREFUSED/.test(text)) return "connection refused";
  if (/includes credentials/.test(text)) return "a URL with user:password is not supported here";
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/.test(text)) return "host not found";
  if (/ETIMEDOUT|TimeoutError|timed? ?out|AbortError/i.test(text)) return "timed out";
  if (/ECONNRESET|EPIPE|socket hang up|other side closed/i.test(text)) return "connection reset";
  if (/NOAUTH|WRONGPASS|authentication|password/i.test(text)) return "authentication failed";
  if (/CERT|SSL|TLS/i.test(text)) return "TLS error";
  return "request failed";
}

/**
 * Walks an answer body and redacts every string under a `detail`, `error` or `message` key (where
 * upstream failures are reported), and configured values in every other string. Returns a copy;
 * the input (often a shared cached answer) is not changed.
 */
export function redactBody<T>(body: T, targets: UpstreamTargets): T {
  const fragments = configuredFragments(targets);
  const walk = (v: unknown, key: string | null): unknown => {
    if (typeof v === "string") {
      if (key === "detail" || key === "error" || key === "message") return redact(v, targets);
      let s = v;
      for (const [frag, component] of fragments) if (s.includes(frag)) s = s.split(frag).join(`<${component}>`);
      return s;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = walk(x, k);
      return out;
    }
    return v;
  };
  return walk(body, null) as T;
}
