/** Shapes of `GET /api/alerts` and of the alert rules and instances the overview carries too. Isomorphic. */
import { z } from "zod";
import { alertStateSchema, answerSchema, availableSchema, metricsSourceSchema } from "./common";
import { alertmanagerInstanceSchema, alertmanagerPartSchema } from "./silences";
import { ALERT_UNITS } from "@/lib/alert-model";

/** One alert instance (one alert × one label set). */
export const alertInstanceSchema = z.object({
  /** An alert name of `ALERT_LIST` (lib/thresholds). */
  alert: z.string(),
  state: alertStateSchema,
  /** The instance's labels (service, topic, handler, reason… as the rule groups by). */
  labels: z.record(z.string(), z.string()),
  /** When the condition started to hold (pending since); `null` when inactive. */
  activeAt: z.string().nullable(),
  /**
   * When it turned firing: the first rule evaluation at or after `activeAt + for`
   * (lib/alert-transitions); `null` unless firing.
   */
  firingSince: z.string().nullable(),
  /** While pending: the evaluation at which it fires if the condition keeps holding; `null` otherwise. */
  firesAt: z.string().nullable(),
  /** The alert expression's current value, when known. */
  value: z.number().nullable(),
  severity: z.string(),
  summary: z.string(),
  /** Alertmanager's state of the instance (`GET /api/alerts` with `ALERTMANAGER_URL` set and answering). */
  alertmanager: alertmanagerInstanceSchema.optional(),
});
/** One alert instance. */
export type AlertInstance = z.infer<typeof alertInstanceSchema>;

/** One alert rule and its worst state over its instances. */
export const alertRuleSchema = z.object({
  alert: z.string(),
  /** Worst state over the instances (`inactive` when none). */
  state: alertStateSchema,
  title: z.string(),
  expr: z.string(),
  for: z.string(),
  threshold: z.number(),
  unit: z.enum(ALERT_UNITS),
  runbookUrl: z.string(),
  /** Time between two evaluations of the rule (the group's interval; the sample interval in embedded mode). */
  evaluationIntervalMs: z.number(),
  instances: z.array(alertInstanceSchema),
});
/** One alert rule with its instances. */
export type AlertRule = z.infer<typeof alertRuleSchema>;

/**
 * Why the alert states are not known, since when, and what they were when last read: a badge then
 * says "unknown (Prometheus unavailable since …)" with the last known state, never "inactive".
 */
export const alertsUnknownSchema = z.object({
  /** When reads of the rule states started failing; null when not known (first read failed). */
  since: z.string().nullable(),
  /** When the last known states were read; null when never. */
  lastKnownAt: z.string().nullable(),
});
/** Alert states that cannot be read now. */
export type AlertsUnknown = z.infer<typeof alertsUnknownSchema>;

/**
 * The alert rules, or {@link Unavailable} with since when and the last rules read (`lastKnown`,
 * each badge then shows its last state as unknown).
 */
export const alertsFieldSchema = availableSchema(
  { rules: z.array(alertRuleSchema) },
  {
    unknown: alertsUnknownSchema.optional(),
    /** The rules as last read (at `unknown.lastKnownAt`); absent when never read. */
    lastKnown: z.array(alertRuleSchema).optional(),
  },
);
/** The alerts field of the overview and alerts answers. */
export type AlertsField = z.infer<typeof alertsFieldSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/alerts

/** Answer of `GET /api/alerts`. */
export const alertsResponseSchema = answerSchema({
  /** `prometheus` = rule states from `/api/v1/rules`; `local` = evaluated in-process from thresholds + `for`. */
  source: metricsSourceSchema,
  alerts: alertsFieldSchema,
  /** Alertmanager's silences (each instance carries Alertmanager's state), or why not. */
  alertmanager: alertmanagerPartSchema,
});
/** Answer of `GET /api/alerts`. */
export type AlertsResponse = z.infer<typeof alertsResponseSchema>;
