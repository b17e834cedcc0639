/** Shapes of `GET /api/lint`: the library's lint of declared handlers and the TTL policy check of observed ones. Isomorphic. */
import { z } from "zod";
import {
  answerSchema,
  availableSchema,
  findingSchema,
  handlerPrefixSchema,
  handlerRefSchema,
  ttlClassSchema,
} from "./common";
import { observedTtlSchema } from "./handlers";

// ---------------------------------------------------------------------------------------------
// GET /api/lint

/** Lint of one declared handler (the library's `lintHandler`). */
export const declaredLintSchema = handlerRefSchema.extend({
  ttlClass: ttlClassSchema.nullable(),
  ttlMs: z.number().nullable(),
  /** The declared `leaseMs` of its Deduplicator. */
  leaseMs: z.number().nullable(),
  /** p99 of one handler attempt over the last hour, seconds; `null` without data or metrics. */
  handlerP99Seconds: z.number().nullable(),
  /** `info`: its `dedup_handler_info` read from Prometheus (any process, any language); `registry`: registered in the dashboard's own process. */
  source: z.enum(["info", "registry"]),
  /** What it does not declare and the label that would say it (the rules needing it did not run). */
  unknown: z.array(z.string()),
  /** The labels its mode has no value for, each with what to show instead ("does not apply (transactions mode)"); `ttlMs`/`leaseMs` are then `null`, never 0. */
  notApplicable: z.array(z.object({ label: z.string(), text: z.string() })),
  findings: z.array(findingSchema),
});
/** Lint of one handler found in Redis (TTL policy against observed TTLs). */
export const observedLintSchema = handlerPrefixSchema.extend({
  ttlObserved: observedTtlSchema,
  noTtlCount: z.number(),
  findings: z.array(findingSchema),
});

/** Answer of `GET /api/lint`. */
export const lintResponseSchema = answerSchema({
  /** Every handler's declaration: its `dedup_handler_info` in Prometheus, else what this process registered. */
  declared: availableSchema({ handlers: z.array(declaredLintSchema) }),
  /** Every handler prefix found in Redis, checked against the TTL policy of spec §3. */
  observed: availableSchema({ handlers: z.array(observedLintSchema) }),
});
/** Answer of `GET /api/lint`. */
export type LintResponse = z.infer<typeof lintResponseSchema>;
