"use client";

/**
 * The overview's alerts: the rules' cards, or — when every rule was read and none fires or is
 * pending — one line on top with the cards below the handlers, so the first screen at 1280×720
 * holds the duplicate figures instead of seven "inactive" cards.
 */
import type { OverviewResponse } from "@/lib/api/overview";
import { AlertCards } from "../alerts/alert-rules";
import { Panel, UnavailableState } from "../panel";

/** Whether every alert rule was read and none is firing or pending. */
export function alertsCalm(d: OverviewResponse): boolean {
  return d.alerts.status === "ok" && d.alerts.rules.every((r) => r.state === "inactive");
}

/** The alerts in one line when none fires or is pending; the cards follow the handlers. */
export function AlertsCalmLine({ d }: { d: OverviewResponse }) {
  const n = d.alerts.status === "ok" ? d.alerts.rules.length : 0;
  const source = d.source === "prometheus" ? "Prometheus rules" : "evaluated in this process";
  return (
    <p data-testid="alerts-calm" className="text-lg text-emerald-800 dark:text-emerald-300">
      {`Alerts: none of the ${n} rules is firing or pending (${source}) · `}
      <a href="#alerts" className="text-blue-700 underline-offset-2 hover:underline dark:text-blue-300">
        the rules ↓
      </a>
    </p>
  );
}

/** The rules' cards (the last known ones beside the reason when the states cannot be read now). */
export function AlertsPanel({ d }: { d: OverviewResponse }) {
  return (
    <div id="alerts" className="scroll-mt-2">
      <Panel
        title="Alerts"
        description={`Source: ${d.source === "prometheus" ? "Prometheus rules" : "evaluated in this process from the same thresholds"}`}
        testId="alerts-panel"
      >
        {d.alerts.status === "ok" ? (
          <AlertCards rules={d.alerts.rules} />
        ) : (
          <>
            <UnavailableState detail={d.alerts.detail} fallback="Alert source" height={80} />
            {d.alerts.lastKnown && d.alerts.unknown ? (
              <AlertCards rules={d.alerts.lastKnown} unknown={d.alerts.unknown} />
            ) : null}
          </>
        )}
      </Panel>
    </div>
  );
}
