/** Shapes of `GET /api/lint`: the library's lint of declared handlers and the TTL policy check of observed ones. Isomorphic. */
import { z } from "zod";
import { availableSchema, findingSchema } from "./common";

// ---------------------------------------------------------------------------------------------
// GET /api/lint

/** Lint of one declared handler (the library's `lintHandler`). */
export const declaredLintSchema = z.object({
  service: z.string(),
  handler: z.string(),
  ttlClass: z.enum(["default", "critical", "analytics"]).nullable(),
  ttlMs: z.number().nullable(),
  /** The declared `leaseMs` of its Deduplicator. */
  leaseMs: z.number().nullable(),
  /** p99 of one handler attempt over the last hour, seconds; `null` without data or metrics. */
  handlerP99Seconds: z.number().nullable(),
  findings: z.array(findingSchema),
});
/** Lint of one handler found in Redis (TTL policy against observed TTLs). */
export const observedLintSchema = z.object({
  service: z.string(),
  handler: z.string(),
  prefix: z.string(),
  ttlObserved: z.object({ minMs: z.number(), maxMs: z.number(), p50Ms: z.number() }).nullable(),
  noTtlCount: z.number(),
  findings: z.array(findingSchema),
});

/** Answer of `GET /api/lint`. */
export const lintResponseSchema = z.object({
  generatedAt: z.string(),
  /** The app's own handlers as declared (their setup); unavailable when the library lint is missing. */
  declared: availableSchema({ handlers: z.array(declaredLintSchema) }),
  /** Every handler prefix found in Redis, checked against the TTL policy of spec §3. */
  observed: availableSchema({ handlers: z.array(observedLintSchema) }),
});
/** Answer of `GET /api/lint`. */
export type LintResponse = z.infer<typeof lintResponseSchema>;
