/**
 * The pieces every answer of the dashboard API (`app/api/**`) shares: the error body, the
 * `generatedAt` stamp, the ok/unavailable marker of a field with one upstream, upstream health, time
 * ranges, and the sub-shapes several endpoints carry (a handler and its key prefix, a bulk action's
 * answer, key states). Each endpoint's own shapes are in `lib/api/<endpoint>.ts`, as zod schemas with
 * their inferred types, composed of these.
 *
 * Isomorphic: no Node imports. The server builds these objects (`server/observe`), the route tests
 * parse responses with the schemas, and the UI may parse with them too (`XxxSchema.parse(json)`).
 *
 * Conventions:
 * - A field whose upstream (Prometheus or Redis) did not answer is `{ status: "unavailable", detail }`
 *   instead of its value, and the rest of the response still answers ({@link unavailableSchema}).
 *   A value that exists but has no data (no traffic yet) is `null`, never a fake 0.
 * - Times are ISO-8601 strings; durations are milliseconds (`…Ms`) or seconds (`…Seconds`) as named;
 *   rates are per second; ratios are 0..1.
 * - Every 4xx/5xx body is {@link ErrorBody} `{ error, detail }`.
 */
import { z } from "zod";
import { TTL_CLASSES } from "@/names/keys";

// ---------------------------------------------------------------------------------------------
// Common pieces

/** The error codes of every API answer (dashboard, workshop, demo, and the proxy's refusals). */
export const ERROR_CODES = [
  "bad_request",
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "conflict",
  "length_required",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "unavailable",
  "internal",
] as const;

/**
 * Error body of every non-2xx answer of every route (server/http.ts writes it): `error` is a short
 * machine code, `detail` says what to fix; `runId` is set on a workshop 409 (the run in progress).
 */
export const errorBodySchema = z.object({
  error: z.enum(ERROR_CODES),
  detail: z.string(),
  runId: z.string().optional(),
});
/** Error body of every non-2xx answer. */
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** Marker in place of a value whose upstream is down or not configured. */
export const unavailableSchema = z.object({
  status: z.literal("unavailable"),
  /** Which upstream and why, e.g. "prometheus: connect ECONNREFUSED 127.0.0.1:9090". */
  detail: z.string(),
});
/** Marker in place of a value whose upstream is down or not configured. */
export type Unavailable = z.infer<typeof unavailableSchema>;

/**
 * `{ status: "ok", ...shape }` or {@link Unavailable} (with the fields of `unavailable`, e.g. the
 * last known value): a field that depends on one upstream. Narrow with `if (x.status === "ok")`.
 */
export function availableSchema<T extends z.ZodRawShape, U extends z.ZodRawShape = Record<never, never>>(
  shape: T,
  unavailable?: U,
) {
  return z.discriminatedUnion("status", [
    z.object({ status: z.literal("ok"), ...shape }),
    unavailableSchema.extend(unavailable ?? ({} as U)),
  ]);
}

/** `{ generatedAt, ...shape }`: an answer of a GET endpoint, stamped with when the server built it (ISO-8601). */
export function answerSchema<T extends z.ZodRawShape>(shape: T) {
  return z.object({ generatedAt: z.string(), ...shape });
}

/** How the app runs: `embedded` (in-memory transport and store, one process) or `real` (Kafka + Redis). */
export const appModeSchema = z.enum(["embedded", "real"]);

/** Label values the API accepts as a service, handler or alert name in a filter or a silence. */
export const LABEL_VALUE_RE = /^[A-Za-z0-9_.:-]{1,200}$/;

/** A Kafka topic name: 1-249 letters, digits, '.', '_' or '-' (the broker's own rule). */
const KAFKA_TOPIC_RE = /^[A-Za-z0-9._-]{1,249}$/;
/** A Kafka topic name, as every query, body and setting that names a topic accepts it. */
export const topicNameSchema = z
  .string()
  .regex(KAFKA_TOPIC_RE, "expected a Kafka topic name: 1-249 letters, digits, '.', '_' or '-'");

/** The TTL class a handler declares for its messages (spec §3, `TtlClass` of names/dedup.ts). */
export const ttlClassSchema = z.enum(TTL_CLASSES);

/** One handler, named as the library's metric labels name it. */
export const handlerRefSchema = z.object({ service: z.string(), handler: z.string() });

/** One handler and its key prefix `<service>:dedup:<handler>` in the store. */
export const handlerPrefixSchema = handlerRefSchema.extend({
  /** Literal key prefix without the trailing `:`, e.g. `notification:dedup:on-review-created`. */
  prefix: z.string(),
});

/**
 * What a bulk action (forget keys, set their TTL, re-drive DLQ records) answers: whether it was a
 * dry run, how many things matched, and whether one call covered them all (`false`: a bound of one
 * call stopped it; call again for the rest).
 */
export const bulkActionAnswerSchema = z.object({ dryRun: z.boolean(), matched: z.number(), complete: z.boolean() });

/** Time ranges the dashboard offers (URL `range=`); default `1h`. */
export const RANGES = ["5m", "15m", "1h", "6h", "24h", "7d"] as const;
/** One time range. */
export type RangeKey = (typeof RANGES)[number];
/** Schema of a time range. */
export const rangeSchema = z.enum(RANGES);

/** Where metric values come from: a Prometheus server, or the app's own registry (embedded mode). */
export const metricsSourceSchema = z.enum(["prometheus", "local"]);
/** Where metric values come from. */
export type MetricsSource = z.infer<typeof metricsSourceSchema>;

/** Health of one upstream as seen by the request that built the response. */
export const upstreamSchema = z.object({
  status: z.enum(["up", "down", "not-configured"]),
  /** Error text when down, a short description ("redis cluster, 3 masters") when up. */
  detail: z.string(),
});
/** Health of one upstream. */
export type Upstream = z.infer<typeof upstreamSchema>;

/** Alert states as Prometheus names them. */
export const alertStateSchema = z.enum(["inactive", "pending", "firing"]);
/** One alert state. */
export type AlertStateName = z.infer<typeof alertStateSchema>;

/** Outcome of one `lintHandler` rule (library) or of the observed-TTL policy check. */
export const findingSchema = z.object({
  severity: z.enum(["error", "warning", "info"]),
  rule: z.string(),
  message: z.string(),
  /** Section of the spec the rule comes from, e.g. "§3". */
  specSection: z.string(),
});
/** One lint finding. */
export type Finding = z.infer<typeof findingSchema>;

/**
 * State of one dedup key, from its value: `processing` (`processing:<token>`, a lease held by a
 * running handler), `done` (the lease marking's completed value), `marked` (`1` of the naive
 * marking or `claimed:<token>` of the release marking, set once), `other` (anything else, or not a string key).
 */
export const keyStateSchema = z.enum(["processing", "done", "marked", "other"]);
/** State of one dedup key. */
export type KeyState = z.infer<typeof keyStateSchema>;
/** How the dashboard names each key state: a `processing` key is a lease. */
export const KEY_STATE_LABELS: Record<KeyState, string> = {
  processing: "processing (leases)",
  done: "done",
  marked: "marked",
  other: "other",
};
/** What each key state means (docs/CONTRACT.md's value forms), for the legend beside every list of keys. */
export const KEY_STATE_LEGEND: Record<KeyState, string> = {
  processing: "a lease: a consumer is running the handler now (processing:<owner>/<token>)",
  done: "processed: the value keeps where (done:<topic>:<partition>:<offset>) and the payload's fingerprint (#…) when the consumer wrote them",
  marked:
    "marked, no position: Watermill-style — the value 1 of the design note, or claimed:<token>; set once, so it cannot say whether the handler finished or where the message was",
  other: "a value the contract does not define",
};

/** Keys counted per {@link KeyState}. */
export const keyStateCountsSchema = z.object(
  Object.fromEntries(keyStateSchema.options.map((s) => [s, z.number()])) as Record<KeyState, z.ZodNumber>,
);
