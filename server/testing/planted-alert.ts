import { defineAlert, type AlertThreshold, type ThresholdLine } from "@/lib/alert-model";

/**
 * An alert that is not in `ALERT_LIST`, for tests that plant a new entry in a copy of the list and
 * check that a consumer (the rule file, promtool, Grafana, the embedded evaluator) picks it up with no
 * other edit: DLQ writes per handler and reason above `threshold`, at once.
 */
export function plantedDlqAlert(threshold: ThresholdLine, summary = "DLQ writes"): AlertThreshold {
  return defineAlert({
    name: "DedupPlantedDlqWrites",
    title: "Messages sent to the DLQ over 5 min",
    query: "dlq_rate",
    threshold,
    normal: null,
    unit: "per_second",
    by: ["service", "topic", "handler", "reason_poisoned"],
    for: "0m",
    severity: "ticket",
    texts: { summary, description: "Messages reach the DLQ." },
    dashboardPath: "/handlers/{{ $labels.service }}/{{ $labels.handler }}",
  });
}
