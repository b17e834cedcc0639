/** Shapes of `GET /api/series?metric=&service=&handler=&range=&step=`: the named chart series. Isomorphic. */
import { z } from "zod";
import { answerSchema, metricsSourceSchema, rangeSchema, unavailableSchema } from "./common";
import { scrapeStateSchema, unknownSchema } from "./measured";
import { ALERT_UNITS } from "@/lib/alert-model";

// ---------------------------------------------------------------------------------------------
// GET /api/series?metric=&service=&handler=&range=&step=

/** Named series the API serves; the PromQL behind each is fixed on the server. */
export const SERIES_METRICS = [
  "duplicate_ratio",
  "processed_rate",
  "check_latency",
  "error_rate",
  "dlq_rate",
  "duplicates_by_cause",
  "handler_time",
  "lease_events",
  "payload_conflicts",
  "consumer_lag",
] as const;
/** One named series. */
export type SeriesMetric = (typeof SERIES_METRICS)[number];
/** Schema of a named series. */
export const seriesMetricSchema = z.enum(SERIES_METRICS);

/** One line of a chart: its labels, a legend name, and `[unixSeconds, value|null]` points. */
export const seriesLineSchema = z.object({
  name: z.string(),
  labels: z.record(z.string(), z.string()),
  points: z.array(z.tuple([z.number(), z.number().nullable()])),
});
/** One line of a chart. */
export type SeriesLine = z.infer<typeof seriesLineSchema>;

/** Answer of `GET /api/series`. */
export const seriesResponseSchema = answerSchema({
  metric: seriesMetricSchema,
  range: rangeSchema,
  stepSeconds: z.number(),
  source: metricsSourceSchema,
  unit: z.enum(ALERT_UNITS),
  /** Lines to draw across the chart (alert threshold, normal band). */
  thresholds: z.array(z.object({ value: z.number(), label: z.string(), kind: z.enum(["alert", "normal"]) })),
  /**
   * The lines, or `unavailable` (the source did not answer), or `unknown` when the service asked for
   * does not export the series' signal ("not measured for this service: export <metric>", never an
   * empty chart that reads as none).
   */
  data: z.discriminatedUnion("status", [
    z.object({ status: z.literal("ok"), series: z.array(seriesLineSchema) }),
    unavailableSchema,
    unknownSchema,
  ]),
  /** Whether the service asked for is scraped now (absent without `service`); its lines break where it was not. */
  scrape: scrapeStateSchema.optional(),
});
/** Answer of `GET /api/series`. */
export type SeriesResponse = z.infer<typeof seriesResponseSchema>;

/** A service or handler name as it appears in labels and key prefixes. */
/** A service or handler name in a query string (printable, 1..200 characters). */
export const nameParam = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\u0000-\u001f\u007f]+$/, "expected printable characters");
/** `GET /api/series?metric=&service=&handler=&range=&step=` (step in seconds, chosen from range when absent). */
export const seriesQuerySchema = z.object({
  metric: seriesMetricSchema,
  service: nameParam.optional(),
  handler: nameParam.optional(),
  range: rangeSchema.default("1h"),
  step: z.coerce
    .number()
    .int("expected whole seconds")
    .min(1, "expected ≥ 1 s")
    .max(86_400, "expected ≤ 86400 s")
    .optional(),
});
