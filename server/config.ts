import { z } from "zod";
import { ALL_DEDUP_KEYS_GLOB, DLQ_TOPIC_SUFFIX, dlqTopicOf } from "@/names/dedup";
import { topicNameSchema } from "@/lib/api/common";
import { DEMO_TOPIC } from "@/lib/api/consumers";
import { RUNBOOK_PATH } from "@/lib/alert-model";
import { parseRoleBindings, type RoleBinding } from "@/server/auth/bindings";
import { parseMaskRules, type MaskRule } from "@/lib/api/masking";

/**
 * The app's configuration, from environment variables, validated once at start-up.
 *
 * An empty value counts as unset. An invalid value stops start-up with a {@link ConfigError} that
 * names the variable and the expected form. Every variable is documented in README.md and
 * `.env.example`.
 */

const empty = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

const hostPort = /^[A-Za-z0-9.\-]+:\d{1,5}$/;

const redisUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === "redis:" || u.protocol === "rediss:") && u.hostname !== "";
  } catch {
    return false;
  }
}, "expected redis://[user:password@]host:port[/db] or rediss://…");

const hostList = z
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

const httpUrl = urlOf(["http:", "https:"], "expected an http(s):// URL, e.g. http://127.0.0.1:9090");

const pgUrl = urlOf(["postgres:", "postgresql:"], "expected postgres://user@host:port/db");

/** An IPv4 or IPv6 address (no port, no brackets, no CIDR). */
export function isIpAddress(s: string): boolean {
  if (/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(s)) return s.split(".").every((x) => Number(x) <= 255);
  return /^[0-9a-f:]+(:\d{1,3}(\.\d{1,3}){3})?$/i.test(s) && s.includes(":") && s.split("::").length <= 2;
}

const ipList = z
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

const hostNameList = z
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

const posInt = (max: number) =>
  z.coerce.number().int(`expected a whole number`).min(1, "expected at least 1").max(max, `expected at most ${max}`);

const schema = z.object({
  REDIS_URL: z.preprocess(empty, redisUrl.optional()),
  REDIS_CLUSTER_NODES: z.preprocess(empty, hostList.optional()),
  KAFKA_BROKERS: z.preprocess(empty, hostList.optional()),
  PROMETHEUS_URL: z.preprocess(empty, httpUrl.optional()),
  DATABASE_URL: z.preprocess(empty, pgUrl.optional()),
  DEMO: z.preprocess(empty, z.enum(["on", "off"], "expected on or off").default("on")),
  DEMO_RATE: z.preprocess(empty, z.coerce.number().min(0, "expected ≥ 0").max(5000, "expected ≤ 5000").default(5)),
  SERVICE_NAME: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "expected lower-case letters, digits and dashes")
      .default("notification"),
  ),
  /**
   * The live demo's topic (its DLQ is `<topic>.dlq`). With SERVICE_NAME it is what keeps two demos
   * on one broker apart: groups are `<service>.<handler>`, keys `<service>:dedup:`.
   */
  DEMO_TOPIC: z.preprocess(
    empty,
    topicNameSchema
      .refine((t) => !t.endsWith(DLQ_TOPIC_SUFFIX), "expected the main topic, not a DLQ (the DLQ is <topic>.dlq)")
      .default(DEMO_TOPIC),
  ),
  WORKSHOP_TOKEN: z.preprocess(empty, z.string().min(16, "expected at least 16 characters").optional()),
  /** Bearer token Alertmanager's webhook sends to `POST /api/alerts/notifications` (server/alert-receiver); unset: the receiver refuses everything. */
  ALERT_RECEIVER_TOKEN: z.preprocess(empty, z.string().min(16, "expected at least 16 characters").optional()),
  DEDUP_PREFIXES: z.preprocess(
    empty,
    z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .refine(
        (xs) => xs.length > 0 && xs.every((x) => x.length <= 200 && !/\s/.test(x)),
        "expected a comma-separated list of globs such as *:dedup:*",
      )
      .default([ALL_DEDUP_KEYS_GLOB]),
  ),
  INSPECT_EXACT_MAX_KEYS: z.preprocess(empty, posInt(100_000_000).default(2_000_000)),
  /** Topics `GET /api/consumers` may describe (default DEMO_TOPIC); the groups it shows are those consuming them. */
  CONSUMER_TOPICS: z.preprocess(
    empty,
    z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .refine(
        (xs) => xs.length > 0 && xs.every((x) => topicNameSchema.safeParse(x).success),
        "expected a comma-separated list of Kafka topic names",
      )
      .optional(),
  ),
  /** DLQ records a re-drive publishes per second (`POST /api/dlq/redrive`, `npm run dlq:replay`): a bulk re-drive must not starve the origin topic's live traffic. */
  DLQ_REDRIVE_RATE: z.preprocess(empty, posInt(10_000).default(50)),
  /** `own`: `/api/consumers` shows host names and PIDs of this service's consumers only (server/observe/consumer-privacy.ts); `all`: of every group on the topic. */
  CONSUMER_DETAILS: z.preprocess(empty, z.enum(["own", "all"], "expected own or all").default("own")),
  /** Time a client has to send a request's headers (server/http-limits.ts). */
  HTTP_HEADERS_TIMEOUT_MS: z.preprocess(
    empty,
    z.coerce
      .number()
      .int("expected a whole number of milliseconds")
      .min(1000, "expected at least 1000")
      .max(120_000, "expected at most 120000")
      .default(10_000),
  ),
  /** Time a client has to send a request's body once its headers arrived. */
  HTTP_BODY_TIMEOUT_MS: z.preprocess(
    empty,
    z.coerce
      .number()
      .int("expected a whole number of milliseconds")
      .min(1000, "expected at least 1000")
      .max(300_000, "expected at most 300000")
      .default(20_000),
  ),
  /** Connections the server keeps open at once; more are closed at once. */
  HTTP_MAX_CONNECTIONS: z.preprocess(empty, posInt(100_000).default(256)),
  /** Alertmanager API (alert states, silences): http(s)://host:port. */
  ALERTMANAGER_URL: z.preprocess(empty, httpUrl.optional()),
  /** Where the alerts' runbook links point: an http(s) URL, or a path of this app; default its own page of RUNBOOK.md. */
  RUNBOOK_BASE_URL: z.preprocess(
    empty,
    z
      .string()
      .refine(
        (s) => httpUrl.safeParse(s).success || /^\/(?!\/)[^\s#?]*$/.test(s),
        "expected an http(s):// URL or a path of this app such as /runbook",
      )
      .default(RUNBOOK_PATH),
  ),

  /** Reverse proxies whose X-Forwarded-For / X-Real-IP / Forwarded are believed (server/access.ts). */
  TRUSTED_PROXIES: z.preprocess(empty, ipList.default([])),
  /** The one header TRUSTED_PROXIES report the client in (right-most untrusted entry; server/access.ts). */
  TRUSTED_PROXY_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected one header name, e.g. X-Forwarded-For")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-for"),
  ),
  /** Where the user comes from (server/auth/principal.ts): `token` (WORKSHOP_TOKEN / this machine), `proxy` (headers from TRUSTED_PROXIES), `oidc` (sign-in). */
  AUTH_MODE: z.preprocess(empty, z.enum(["token", "proxy", "oidc"], "expected token, proxy or oidc").default("token")),
  /** Header a trusted proxy names the user in (AUTH_MODE=proxy). */
  PROXY_USER_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected a header name")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-user"),
  ),
  /** Header a trusted proxy names the user's e-mail in (AUTH_MODE=proxy). */
  PROXY_EMAIL_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected a header name")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-email"),
  ),
  /** Header a trusted proxy lists the user's groups in, comma-separated (AUTH_MODE=proxy). */
  PROXY_GROUPS_HEADER: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, "expected a header name")
      .transform((s) => s.toLowerCase())
      .default("x-forwarded-groups"),
  ),
  /** Roles of groups, per service (AUTH_MODE=proxy/oidc): `sre=admin:*,billing-devs=operator:billing;payments` (server/auth/bindings.ts). */
  ROLE_BINDINGS: z.preprocess(
    empty,
    z
      .string()
      .transform((s, ctx): RoleBinding[] => {
        try {
          return parseRoleBindings(s);
        } catch (e) {
          ctx.addIssue({ code: "custom", message: e instanceof Error ? e.message : String(e) });
          return z.NEVER;
        }
      })
      .default([]),
  ),
  /** Host names the app answers to besides loopback and its own (server/allowed-hosts.ts); `.example.com` allows sub-domains. */
  ALLOWED_HOSTS: z.preprocess(empty, hostNameList.default([])),
  /** `on`: local viewers see upstream errors unredacted (server/redact.ts); others never do. */
  SHOW_UPSTREAM_DETAIL: z.preprocess(empty, z.enum(["on", "off"], "expected on or off").default("off")),
  /** Payload masking for roles without `unmasked` (server/observe/records/masking.ts): a JSON array of rules; default none. */
  MASK_RULES: z.preprocess(
    empty,
    z
      .string()
      .transform((s, ctx): MaskRule[] => {
        const r = parseMaskRules(s);
        if (r.ok) return r.rules;
        ctx.addIssue({ code: "custom", message: r.error });
        return z.NEVER;
      })
      .default([]),
  ),
  /** Port `npm run dev` / `npm start` listen on (default 3000); read here only to validate it. */
  PORT: z.preprocess(
    empty,
    z.coerce
      .number()
      .int("expected a whole number")
      .min(1, "expected a port in 1-65535")
      .max(65535, "expected a port in 1-65535")
      .optional(),
  ),
  /** Interface `npm start` binds (default 127.0.0.1); read here only to validate it. */
  HOST: z.preprocess(
    empty,
    z
      .string()
      .regex(
        /^(\[?[0-9a-fA-F:.]+\]?|[A-Za-z0-9.-]{1,253})$/,
        "expected a host name or an IP address, e.g. 127.0.0.1 or 0.0.0.0",
      )
      .optional(),
  ),

  /** OIDC sign-in (AUTH_MODE=oidc, server/auth/oidc*.ts): the provider's issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`. */
  OIDC_ISSUER: z.preprocess(
    empty,
    httpUrl
      .refine(
        (s) => new URL(s).protocol === "https:" || ["127.0.0.1", "localhost", "[::1]"].includes(new URL(s).hostname),
        "expected an https:// URL (http:// only for a provider on this machine, e.g. http://127.0.0.1:8080)",
      )
      .optional(),
  ),
  OIDC_CLIENT_ID: z.preprocess(empty, z.string().max(500, "expected at most 500 characters").optional()),
  OIDC_CLIENT_SECRET: z.preprocess(empty, z.string().max(2000, "expected at most 2000 characters").optional()),
  /** Where the provider sends the browser back: `<app>/api/auth/callback` (default: derived from the request's own origin). */
  OIDC_REDIRECT_URL: z.preprocess(empty, httpUrl.optional()),
  /** The ID-token / userinfo claim that lists the user's groups (ROLE_BINDINGS maps groups to roles). */
  OIDC_GROUPS_CLAIM: z.preprocess(
    empty,
    z
      .string()
      .regex(/^[A-Za-z0-9_:./-]{1,200}$/, "expected a claim name such as groups")
      .default("groups"),
  ),
  /** Scopes asked of the provider, space-separated; must include openid. */
  OIDC_SCOPES: z.preprocess(
    empty,
    z
      .string()
      .refine(
        (s) => s.split(/\s+/).includes("openid"),
        "expected space-separated scopes including openid, e.g. openid profile email groups",
      )
      .default("openid profile email"),
  ),
  /** Key of the signed session cookie (HMAC-SHA256): at least 32 random characters, e.g. `openssl rand -base64 48`. */
  SESSION_SECRET: z.preprocess(
    empty,
    z.string().min(32, "expected at least 32 characters (e.g. openssl rand -base64 48)").optional(),
  ),
  /** How long a sign-in lasts: seconds, or a number with s, m or h (default 8h). */
  SESSION_MAX_AGE: z.preprocess(
    empty,
    z
      .string()
      .regex(/^\d{1,7}[smh]?$/, "expected seconds or a duration such as 30m or 8h")
      .transform((s) => Number(s.replace(/[smh]$/, "")) * ({ s: 1, m: 60, h: 3600 }[s.slice(-1)] ?? 1))
      .refine((n) => n >= 60 && n <= 30 * 86_400, "expected between 60 s and 720h")
      .default(8 * 3600),
  ),
});

/** With AUTH_MODE=oidc, the OIDC variables sign-in cannot work without; the first one missing. */
function missingOidcSetting(c: z.infer<typeof schema>): [string, string] | null {
  if (!c.OIDC_ISSUER)
    return [
      "OIDC_ISSUER",
      "required with AUTH_MODE=oidc: the provider's issuer URL, e.g. https://login.example.com/realms/ops",
    ];
  if (!c.OIDC_CLIENT_ID)
    return ["OIDC_CLIENT_ID", "required with AUTH_MODE=oidc: the client id registered at the provider"];
  if (!c.SESSION_SECRET)
    return [
      "SESSION_SECRET",
      "required with AUTH_MODE=oidc: at least 32 random characters that sign the session cookie (e.g. openssl rand -base64 48)",
    ];
  return null;
}

/** Validated configuration. */
export type AppConfig = Omit<z.infer<typeof schema>, "CONSUMER_TOPICS"> & {
  /** `embedded` when neither REDIS_URL/REDIS_CLUSTER_NODES nor KAFKA_BROKERS is set, else `real`. */
  mode: "embedded" | "real";
  /** CONSUMER_TOPICS, or `[DEMO_TOPIC]` when unset. */
  CONSUMER_TOPICS: string[];
  /** The demo's DLQ: `<DEMO_TOPIC>.dlq` (derived, not a variable). */
  demoDlqTopic: string;
};

/** Thrown when an environment variable is invalid; the message names it and the expected form. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly expected: string,
  ) {
    super(`Invalid configuration: ${variable} — ${expected}. Fix or unset ${variable} (see .env.example).`);
    this.name = "ConfigError";
  }
}

/** Parses and validates `env`; throws {@link ConfigError} naming the first invalid variable. */
export function parseConfig(env: Record<string, string | undefined>): AppConfig {
  const r = schema.safeParse(env);
  if (!r.success) {
    const issue = r.error.issues[0];
    const variable = String(issue?.path[0] ?? "environment");
    throw new ConfigError(variable, issue?.message ?? "invalid value");
  }
  const c = r.data;
  const missing = c.AUTH_MODE === "oidc" ? missingOidcSetting(c) : null;
  if (missing) throw new ConfigError(...missing);
  if (c.AUTH_MODE === "proxy" && c.TRUSTED_PROXIES.length === 0)
    throw new ConfigError(
      "TRUSTED_PROXIES",
      "required with AUTH_MODE=proxy: the addresses of the authenticating proxies whose user headers are believed, e.g. 127.0.0.1",
    );
  const mode = c.REDIS_URL || c.REDIS_CLUSTER_NODES || c.KAFKA_BROKERS ? "real" : "embedded";
  return { ...c, mode, CONSUMER_TOPICS: c.CONSUMER_TOPICS ?? [c.DEMO_TOPIC], demoDlqTopic: dlqTopicOf(c.DEMO_TOPIC) };
}

/** The process's configuration, parsed once (kept on globalThis: Next.js evaluates modules more than once). */
export function config(): AppConfig {
  const g = globalThis as typeof globalThis & { __dedupHealthConfig?: AppConfig };
  g.__dedupHealthConfig ??= parseConfig(process.env);
  return g.__dedupHealthConfig;
}
