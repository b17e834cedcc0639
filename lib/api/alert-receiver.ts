/**
 * `POST /api/alerts/notifications`: the body Alertmanager's webhook receiver sends (version 4 of its
 * format, https://prometheus.io/docs/alerting/latest/configuration/#webhook_config), and the
 * answer. Isomorphic: no Node imports.
 */
import { z } from "zod";

const text = (max: number) => z.string().max(max, `expected at most ${max} characters`);
const labelMap = z.record(text(200), text(4000));

/** One alert of a notification. */
export const webhookAlertSchema = z.object({
  status: z.enum(["firing", "resolved"]),
  labels: labelMap,
  annotations: labelMap.default({}),
  startsAt: text(40),
  endsAt: text(40),
  generatorURL: text(2000).default(""),
  fingerprint: text(64).default(""),
});
/** One alert of a notification. */
export type WebhookAlert = z.infer<typeof webhookAlertSchema>;

/** Alerts one notification may carry: the webhook's `max_alerts` in the shipped config is below it. */
export const WEBHOOK_MAX_ALERTS = 50;

/** Body of a notification (Alertmanager webhook, version 4). */
export const webhookBodySchema = z.object({
  version: z.literal("4", "expected Alertmanager's webhook format version 4"),
  status: z.enum(["firing", "resolved"]),
  receiver: text(200),
  groupKey: text(2000).default(""),
  truncatedAlerts: z.number().int().min(0).default(0),
  externalURL: text(2000).default(""),
  alerts: z
    .array(webhookAlertSchema)
    .min(1, "expected at least one alert")
    .max(WEBHOOK_MAX_ALERTS, `expected at most ${WEBHOOK_MAX_ALERTS} alerts`),
});
/** Body of a notification. */
export type WebhookBody = z.infer<typeof webhookBodySchema>;

/** Answer of `POST /api/alerts/notifications`. */
export const receiverResponseSchema = z.object({
  /** Alerts recorded as chart events. */
  recorded: z.number().int(),
});
/** Answer of `POST /api/alerts/notifications`. */
export type ReceiverResponse = z.infer<typeof receiverResponseSchema>;
