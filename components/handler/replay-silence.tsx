"use client";

import { useQuery } from "@tanstack/react-query";
import { alertsQuery } from "@/lib/query-options";
import { ALERT_NAMES } from "@/lib/thresholds";
import { SilenceForm } from "../alerts/silence-form";

/**
 * "Silence during this replay": a replay or re-drive of this handler's DLQ re-delivers records it
 * may already have processed, so its duplicate ratio rises by design (RUNBOOK.md). Mutes
 * `DedupDuplicateRateHigh{service, handler}` in Alertmanager for the chosen time; shown only when
 * the app has an Alertmanager.
 */
export function ReplaySilence({ service, handler }: { service: string; handler: string }) {
  const q = useQuery(alertsQuery(false));
  if (q.data?.alertmanager.status !== "ok") return null;
  return (
    <div className="text-sm" data-testid="replay-silence">
      <SilenceForm
        alertname={ALERT_NAMES.duplicateRate}
        service={service}
        handler={handler}
        label="Silence during this replay"
        comment={`DLQ replay / re-drive of ${service}/${handler}: duplicates expected`}
        testId="replay-silence-open"
      />
    </div>
  );
}
