/**
 * `GET /api/events?range=&service=&handler=`: what happened in the range, for the chart markers —
 * alert transitions (Prometheus' ALERTS series), app restarts (`process_start_time_seconds`),
 * rebalances (the app's in-process event log), and every action of the audit trail that changed
 * something: demo fault and duplicate-source toggles, DLQ re-drives and CLI replays, key forget /
 * TTL, workshop runs, silences. Isomorphic: no Node imports.
 */
import { z } from "zod";
import { answerSchema, LABEL_VALUE_RE, rangeSchema } from "./common";

/** Kinds of marker, in legend order. */
export const MARKER_KINDS = [
  "alert",
  "notified",
  "restart",
  "rebalance",
  "fault",
  "source",
  "replay",
  "keys",
  "workshop",
  "silence",
  "action",
] as const;
/** One marker kind. */
export type MarkerKind = (typeof MARKER_KINDS)[number];

/** What each kind means (the chart legend) and its colour. */
export const MARKER_INFO: Record<MarkerKind, { label: string; color: string }> = {
  alert: { label: "alert pending / firing / resolved", color: "#dc2626" },
  notified: { label: "alert notification sent (firing / resolved)", color: "#b91c1c" },
  restart: { label: "app restart", color: "#7c3aed" },
  rebalance: { label: "consumer-group rebalance", color: "#0891b2" },
  fault: { label: "demo store fault changed", color: "#d97706" },
  source: { label: "demo duplicate source toggled", color: "#ca8a04" },
  replay: { label: "replay / re-drive", color: "#16a34a" },
  keys: { label: "keys forgotten / TTL set", color: "#db2777" },
  workshop: { label: "workshop run started", color: "#4f46e5" },
  silence: { label: "silence created / expired", color: "#64748b" },
  action: { label: "other recorded action", color: "#78716c" },
};

/** Most markers an answer (and so a chart) carries: the newest are kept. */
export const MAX_MARKERS = 50;

/** One event. */
export const chartEventSchema = z.object({
  /** ISO time. */
  at: z.string(),
  kind: z.enum(MARKER_KINDS),
  /** What happened, one line (the marker's hover text). */
  title: z.string(),
  labels: z.record(z.string(), z.string()),
});
/** One event. */
export type ChartEvent = z.infer<typeof chartEventSchema>;

/** Query of `GET /api/events`. */
export const eventsQuerySchema = z.object({
  range: rangeSchema.default("1h"),
  service: z.string().regex(LABEL_VALUE_RE).optional(),
  handler: z.string().regex(LABEL_VALUE_RE).optional(),
});
/** Parsed query of `GET /api/events`. */
export type EventsQuery = z.infer<typeof eventsQuerySchema>;

/** Answer of `GET /api/events`: the newest {@link MAX_MARKERS} events of the range, oldest first. */
export const eventsResponseSchema = answerSchema({
  events: z.array(chartEventSchema),
  /** Events dropped beyond {@link MAX_MARKERS}. */
  truncated: z.number().int(),
  /** Sources that did not answer (e.g. Prometheus for alert transitions); the others still count. */
  partial: z.array(z.string()),
});
/** Answer of `GET /api/events`. */
export type EventsResponse = z.infer<typeof eventsResponseSchema>;
