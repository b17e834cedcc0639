/**
 * The forms of the app's environment variables (server/config.ts): URLs by scheme, host:port and
 * address lists, whole numbers in a range. An empty value counts as unset ({@link empty}).
 */
import { z } from "zod";

/** An empty or blank value as unset (`z.preprocess(empty, …)`). */
export const empty = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

/** `host:port`. */
const hostPort = /^[A-Za-z0-9.\-]+:\d{1,5}$/;

/** A `redis://` or `rediss://` URL with a host. */
export const redisUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === "redis:" || u.protocol === "rediss:") && u.hostname !== "";
  } catch {
    return false;
  }
}, "expected redis://[user:password@]host:port[/db] or rediss://…");

/** A comma-separated list of `host:port`. */
export const hostList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .refine((xs) => xs.length > 0 && xs.every((x) => hostPort.test(x)), "expected a comma-separated list of host:port");

/** A URL string whose scheme is one of `protocols` (e.g. `"http:"`); else `message`. */
const urlOf = (protocols: readonly string[], message: string) =>
  z.string().refine((s) => {
    try {
      return protocols.includes(new URL(s).protocol);
    } catch {
      return false;
    }
  }, message);

/** An http(s) URL. */
export const httpUrl = urlOf(["http:", "https:"], "expected an http(s):// URL, e.g. http://127.0.0.1:9090");

/** A PostgreSQL URL. */
export const pgUrl = urlOf(["postgres:", "postgresql:"], "expected postgres://user@host:port/db");

/** A SQL name as the PostgreSQL inbox takes it (its `schema` and `table` options). */
const SQL_NAME = "[a-z_][a-z0-9_]{0,50}";

/** `[schema.]table` of a PostgreSQL inbox table (schema `public` when absent), or `off`: `null`. */
export const inboxTable = z
  .string()
  .trim()
  .regex(
    new RegExp(`^(off|(${SQL_NAME}\\.)?${SQL_NAME})$`),
    "expected [schema.]table in lower-case letters, digits and _, e.g. public.dedup_inbox, or off",
  )
  .transform((s) => {
    if (s === "off") return null;
    const [a, b] = s.split(".");
    return b === undefined ? { schema: "public", table: a! } : { schema: a!, table: b };
  });

/** An IPv4 or IPv6 address (no port, no brackets, no CIDR). */
export function isIpAddress(s: string): boolean {
  if (/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(s)) return s.split(".").every((x) => Number(x) <= 255);
  return /^[0-9a-f:]+(:\d{1,3}(\.\d{1,3}){3})?$/i.test(s) && s.includes(":") && s.split("::").length <= 2;
}

/** A comma-separated list of IP addresses, lower-cased. */
export const ipList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
  )
  .refine(
    (xs) => xs.length > 0 && xs.every(isIpAddress),
    "expected a comma-separated list of IP addresses (the reverse proxies in front of the app), e.g. 127.0.0.1,::1",
  );

/** A host name (`.example.com`: with its sub-domains) or an IP address, no port. */
function isHostPattern(s: string): boolean {
  const ip = s.startsWith("[") && s.endsWith("]") ? s.slice(1, -1) : s;
  if (isIpAddress(ip)) return true;
  return /^\.?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/.test(s) && s.length <= 253;
}

/** A comma-separated list of host names or IP addresses without a port, lower-cased. */
export const hostNameList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
  )
  .refine(
    (xs) => xs.length > 0 && xs.every(isHostPattern),
    "expected a comma-separated list of host names or IP addresses without a port (.example.com allows its sub-domains), e.g. dash.example.com,10.0.0.5",
  );

/** A whole number in 1..`max`. */
export const posInt = (max: number) =>
  z.coerce.number().int(`expected a whole number`).min(1, "expected at least 1").max(max, `expected at most ${max}`);
