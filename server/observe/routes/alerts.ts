import type { AlertsResponse } from "@/lib/api/alerts";
import type { ObserveContext } from "../core/ports";
import { alertsField } from "../shared/alerts-field";
import { got } from "../shared/upstream";
import { withAlertmanager } from "../alertmanager/client";

/** Builds `GET /api/alerts`: the rule states, each instance with Alertmanager's state when it answers. */
export async function getAlerts(ctx: ObserveContext): Promise<AlertsResponse> {
  const a = await got(ctx.metrics.alerts());
  const am = await withAlertmanager(a.ok ? a.value : []);
  return {
    generatedAt: new Date().toISOString(),
    source: ctx.metrics.kind,
    alerts: alertsField(ctx, a.ok ? { ok: true, value: am.rules } : a),
    alertmanager: am.part,
  };
}
