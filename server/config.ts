import { z } from "zod";

/**
 * The app's configuration, from environment variables, validated once at start-up.
 *
 * An empty value counts as unset. An invalid value stops start-up with a {@link ConfigError} that
 * names the variable and the expected form. Every variable is documented in README.md and
 * `.env.example`.
 */

const empty = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

const hostPort = /^[A-Za-z0-9.\-]+:\d{1,5}$/;

const redisUrl = z
  .string()
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === "redis:" || u.protocol === "rediss:") && u.hostname !== "";
    } catch {
      return false;
    }
  }, "expected redis://[user:password@]host:port[/db] or rediss://…");

const hostList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
  .refine((xs) => xs.length > 0 && xs.every((x) => hostPort.test(x)), "expected a comma-separated list of host:port");

const httpUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}, "expected an http(s):// URL, e.g. http://127.0.0.1:9090");

const pgUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return u.protocol === "postgres:" || u.protocol === "postgresql:";
  } catch {
    return false;
  }
}, "expected postgres://user@host:port/db");

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
  WORKSHOP_TOKEN: z.preprocess(empty, z.string().min(16, "expected at least 16 characters").optional()),
  DEDUP_PREFIXES: z.preprocess(
    empty,
    z
      .string()
      .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
      .refine((xs) => xs.length > 0 && xs.every((x) => x.length <= 200 && !/\s/.test(x)), "expected a comma-separated list of globs such as *:dedup:*")
      .default(["*:dedup:*"]),
  ),
  INSPECT_EXACT_MAX_KEYS: z.preprocess(empty, posInt(100_000_000).default(2_000_000)),
});

/** Validated configuration. */
export type AppConfig = z.infer<typeof schema> & {
  /** `embedded` when neither REDIS_URL/REDIS_CLUSTER_NODES nor KAFKA_BROKERS is set, else `real`. */
  mode: "embedded" | "real";
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
  const mode = c.REDIS_URL || c.REDIS_CLUSTER_NODES || c.KAFKA_BROKERS ? "real" : "embedded";
  return { ...c, mode };
}

/** The process's configuration, parsed once (kept on globalThis: Next.js evaluates modules more than once). */
export function config(): AppConfig {
  const g = globalThis as typeof globalThis & { __dedupHealthConfig?: AppConfig };
  g.__dedupHealthConfig ??= parseConfig(process.env);
  return g.__dedupHealthConfig;
}
