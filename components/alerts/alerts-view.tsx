"use client";

import { useQuery } from "@tanstack/react-query";
import { alertsQuery } from "@/lib/query-options";
import { REFRESH_MS, useViewState } from "@/lib/url-state";
import { Panel, UnavailableState } from "../panel";
import { QueryView } from "../query-state";
import { AlertTable } from "./alert-rules";
import { SilencesPanel } from "./silences";
import { formatInstant } from "@/lib/clock-time";

/** Every dedup alert rule with its instances, state and since-when (from /api/alerts). */
export function AlertsView() {
  const { view } = useViewState();
  const q = useQuery(alertsQuery(REFRESH_MS[view.refresh]));
  return (
    <QueryView query={q} what="Alerts" height={200}>
      {(d) =>
        d.alerts.status === "ok" ? (
          <>
            <p className="text-sm text-slate-600 dark:text-slate-300">
              {d.source === "prometheus"
                ? "Rule states from Prometheus (/api/v1/rules)."
                : "Embedded mode: evaluated in this process from the same thresholds and hold durations as the Prometheus rules."}{" "}
              Updated {formatInstant(d.generatedAt)}.{" "}
              <span data-testid="am-status">
                {d.alertmanager.status === "ok"
                  ? "Alertmanager's state beside each instance (Prometheus sends it firing alerts only)."
                  : d.alertmanager.status === "not-configured"
                    ? "No Alertmanager configured (ALERTMANAGER_URL): silences are not available."
                    : `Alertmanager did not answer: ${d.alertmanager.detail}`}
              </span>
            </p>
            <AlertTable
              rules={d.alerts.rules}
              now={Date.parse(d.generatedAt)}
              alertmanager={d.alertmanager.status === "ok"}
            />
            {d.alertmanager.status === "ok" ? <SilencesPanel /> : null}
          </>
        ) : (
          <>
            <Panel title="Alert rules">
              <UnavailableState
                detail={d.alerts.detail}
                fallback={d.source === "prometheus" ? "Prometheus" : "Alert source"}
              />
            </Panel>
            {d.alerts.lastKnown && d.alerts.unknown ? (
              <AlertTable rules={d.alerts.lastKnown} now={Date.parse(d.generatedAt)} unknown={d.alerts.unknown} />
            ) : null}
          </>
        )
      }
    </QueryView>
  );
}
