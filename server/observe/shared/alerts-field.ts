/**
 * The alerts field of the overview and alerts answers: the rules, or — when they cannot be read —
 * why, since when and the last known rules, so no badge turns a lost Prometheus into "inactive".
 */
import type { AlertInstance, AlertRule, AlertsField, AlertsUnknown } from "@/lib/api/alerts";
import type { ObserveContext } from "../core/ports";
import type { Got } from "./upstream";

/** Since when the alert states are unknown and when they were last read; null while they are read. */
export function alertsUnknown(ctx: ObserveContext, alerts: Got<AlertRule[]>): AlertsUnknown | null {
  if (alerts.ok) return null;
  const m = ctx.metrics.alertsMemory?.();
  return { since: m?.unavailableSince ?? null, lastKnownAt: m?.lastKnown?.at ?? null };
}

/** The rules read now, or the last known ones while reads fail (empty when never read). */
export function alertRulesOrLastKnown(ctx: ObserveContext, alerts: Got<AlertRule[]>): AlertRule[] {
  return alerts.ok ? alerts.value : (ctx.metrics.alertsMemory?.().lastKnown?.rules ?? []);
}

/** The `alerts` field of an answer. */
export function alertsField(ctx: ObserveContext, alerts: Got<AlertRule[]>): AlertsField {
  if (alerts.ok) return { status: "ok", rules: alerts.value };
  const m = ctx.metrics.alertsMemory?.();
  if (!m) return { status: "unavailable", detail: alerts.detail };
  return {
    status: "unavailable",
    detail: alerts.detail,
    unknown: { since: m.unavailableSince, lastKnownAt: m.lastKnown?.at ?? null },
    ...(m.lastKnown ? { lastKnown: m.lastKnown.rules } : {}),
  };
}

/** Alert instances of one handler: its service's instances without a handler label, or its own. */
export function handlerAlerts(rules: readonly AlertRule[], service: string, handler: string): AlertInstance[] {
  return rules.flatMap((a) =>
    a.instances.filter(
      (i) => i.labels.service === service && (i.labels.handler === undefined || i.labels.handler === handler),
    ),
  );
}
