/**
 * "Not measured" and "not scraped" as API fields: a figure that needs a signal the service does
 * not export is `{ status: "unknown", metric, detail }` (the metric it would need), never a zero;
 * a service whose series went stale is `{ status: "down", lastScrapeAt }`. Isomorphic.
 */
import { z } from "zod";

/** A figure the service does not export the signal of: the metric to export, and the page's sentence. */
export const unknownSchema = z.object({
  status: z.literal("unknown"),
  /** The metric whose series would make it known (names/dedup, names/runtime). */
  metric: z.string(),
  /** "not measured for this service: export <metric>". */
  detail: z.string(),
});
/** A figure the service does not export the signal of. */
export type Unknown = z.infer<typeof unknownSchema>;

/** Whether one optional signal is exported by the service. */
export const measuredFieldSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("ok") }),
  unknownSchema,
]);
/** Whether one optional signal is exported by the service. */
export type MeasuredField = z.infer<typeof measuredFieldSchema>;

/**
 * Whether the service is scraped now: `down` when the series of every instance that exports it went
 * stale (the scrape failed: `up == 0`, or the target is gone), with the last scrape within the hour.
 */
export const scrapeStateSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("live") }),
  z.object({ status: z.literal("down"), lastScrapeAt: z.string().nullable(), detail: z.string() }),
]);
/** Whether the service is scraped now. */
export type ScrapeState = z.infer<typeof scrapeStateSchema>;
