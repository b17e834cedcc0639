/**
 * Alertmanager's notifications, received: each alert of a webhook call becomes a chart event
 * ("notified: DedupMemoryLost firing …", "notified: … resolved") on the pages of the service and
 * handler it names, through the one event log (server/observe/shared/events.ts, shared by the replicas).
 * The caller proves itself with its own bearer token, `ALERT_RECEIVER_TOKEN`, not a user's.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { ReceiverResponse, WebhookAlert, WebhookBody } from "@/lib/api/alert-receiver";
import { config } from "@/server/config";
import { recordEvent } from "@/server/observe/shared/events";

/** Labels of an alert copied onto its event: the ones the pages filter by, and what it was. */
const KEPT_LABELS = ["alertname", "severity", "service", "handler", "topic", "reason", "job"] as const;
/** Longest title of an event (the summary is cut with an ellipsis). */
const MAX_TITLE = 300;

/**
 * Why the request may not post notifications (no or another bearer token, or none configured), or
 * null. Compared in constant time over digests, so neither the token nor its length leaks.
 */
export function receiverRefusal(
  headers: Headers,
  token: string | undefined = config().ALERT_RECEIVER_TOKEN,
): string | null {
  if (!token) return "ALERT_RECEIVER_TOKEN is not set on this server: the alert receiver accepts no notification";
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  if (!m)
    return "send Authorization: Bearer <ALERT_RECEIVER_TOKEN> (Alertmanager: http_config.authorization of the webhook)";
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(m[1]!), digest(token)) ? null : "the bearer token is not ALERT_RECEIVER_TOKEN";
}

/** Printable, one line, at most `max` characters. */
function oneLine(s: string, max: number): string {
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The event title of one alert: what was notified, where, and its summary. */
export function notificationTitle(a: WebhookAlert): string {
  const name = a.labels.alertname ?? "alert";
  const where = [a.labels.service, a.labels.handler ?? a.labels.topic ?? a.labels.reason].filter(Boolean).join("/");
  const what = a.status === "firing" ? "firing" : "resolved";
  const summary = a.annotations.summary ? ` — ${a.annotations.summary}` : "";
  return oneLine(`Notified: ${name} ${what}${where ? ` (${where})` : ""}${summary}`, MAX_TITLE);
}

/** Records every alert of the notification as a `notified` event, now (when it was sent). */
export async function recordNotifications(body: WebhookBody, now = Date.now()): Promise<ReceiverResponse> {
  for (const a of body.alerts) {
    const labels: Record<string, string> = { status: a.status };
    for (const k of KEPT_LABELS) if (a.labels[k]) labels[k] = oneLine(a.labels[k], 200);
    await recordEvent("notified", notificationTitle(a), labels, now);
  }
  return { recorded: body.alerts.length };
}
