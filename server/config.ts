import { z } from "zod";
import { ALL_DEDUP_KEYS_GLOB } from "@/names/keys";
import { DLQ_TOPIC_SUFFIX, dlqTopicOf } from "@/names/dlq";
import { topicNameSchema } from "@/lib/api/common";
import { DEMO_TOPIC } from "@/names/product";
import { RUNBOOK_PATH } from "@/lib/alert-model";
import { ACCESS_ENV, missingOidcSetting, SIGN_IN_ENV } from "./config-access";
import { empty, hostList, httpUrl, inboxTable, pgUrl, posInt, redisUrl } from "./config-fields";

/**
 * The app's configuration, from environment variables, validated once at start-up.
 *
 * An empty value counts as unset. An invalid value stops start-up with a {@link ConfigError} that
 * names the variable and the expected form. Every variable is documented in README.md and
 * `.env.example`.
 */

const schema = z.object({
  REDIS_URL: z.preprocess(empty, redisUrl.optional()),
  REDIS_CLUSTER_NODES: z.preprocess(empty, hostList.optional()),
  KAFKA_BROKERS: z.preprocess(empty, hostList.optional()),
  PROMETHEUS_URL: z.preprocess(empty, httpUrl.optional()),
  DATABASE_URL: z.preprocess(empty, pgUrl.optional()),
  /** The PostgreSQL inbox table the key browser and the key actions read (`[schema.]table`, or `off`). */
  INBOX_TABLE: z.preprocess(empty, inboxTable.default({ schema: "public", table: "dedup_inbox" })),
  /** The database of `INBOX_TABLE`, when it is not `DATABASE_URL`'s. */
  INBOX_DATABASE_URL: z.preprocess(empty, pgUrl.optional()),
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
  /** `own`: `/api/consumers` shows host names and PIDs of this service's consumers only (server/observe/shared/consumer-privacy.ts); `all`: of every group on the topic. */
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
  ...ACCESS_ENV,
  ...SIGN_IN_ENV,
});

/** Validated configuration. */
export type AppConfig = Omit<z.infer<typeof schema>, "CONSUMER_TOPICS"> & {
  /** `embedded` when neither REDIS_URL/REDIS_CLUSTER_NODES nor KAFKA_BROKERS is set, else `real`. */
  mode: "embedded" | "real";
  /** CONSUMER_TOPICS, or `[DEMO_TOPIC]` when unset. */
  CONSUMER_TOPICS: string[];
  /** The demo's DLQ: `<DEMO_TOPIC>.dlq` (derived, not a variable). */
  demoDlqTopic: string;
  /** The PostgreSQL inbox table to read: `INBOX_TABLE` in `INBOX_DATABASE_URL`, else `DATABASE_URL`; null when off or neither is set. */
  inbox: { url: string; schema: string; table: string } | null;
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
  const inboxUrl = c.INBOX_DATABASE_URL ?? c.DATABASE_URL;
  if (!inboxUrl && c.INBOX_TABLE && empty(env.INBOX_TABLE) !== undefined)
    throw new ConfigError(
      "INBOX_DATABASE_URL",
      "required with INBOX_TABLE when DATABASE_URL is not set: postgres://user@host:port/db of the inbox table",
    );
  const inbox = inboxUrl && c.INBOX_TABLE ? { url: inboxUrl, ...c.INBOX_TABLE } : null;
  const mode = c.REDIS_URL || c.REDIS_CLUSTER_NODES || c.KAFKA_BROKERS ? "real" : "embedded";
  const consumerTopics = c.CONSUMER_TOPICS ?? [c.DEMO_TOPIC];
  return { ...c, mode, CONSUMER_TOPICS: consumerTopics, demoDlqTopic: dlqTopicOf(c.DEMO_TOPIC), inbox };
}

/** The process's configuration, parsed once (kept on globalThis: Next.js evaluates modules more than once). */
export function config(): AppConfig {
  const g = globalThis as typeof globalThis & { __dedupHealthConfig?: AppConfig };
  g.__dedupHealthConfig ??= parseConfig(process.env);
  return g.__dedupHealthConfig;
}
