/**
 * Context a notification carries that Alertmanager cannot know: the top hot UUIDs and the DLQ
 * backlog of the alert's handler, as rule annotations Prometheus fills at each evaluation with
 * `query` (its template function) — so a notification says them even while the dashboard is down.
 * The rule generator adds them to every alert evaluated per service and handler; Alertmanager's
 * template (infra/alertmanager/templates/dedup.tmpl) prints them. Isomorphic: no Node imports.
 */
import { HOT_UUID_METRICS } from "@/names/dedup";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import type { AlertThreshold } from "./alert-model";

/** Hot UUIDs a notification names. */
export const CONTEXT_HOT_UUIDS = 3;

/** PromQL (a Go `printf` format: service, handler) of the handler's hottest UUIDs, most copies first. */
const HOT_FORMAT = `sort_desc(topk(${CONTEXT_HOT_UUIDS}, sum by (uuid) (${HOT_UUID_METRICS.copies}{service=%q,handler=%q})))`;
/** PromQL (format: handler) of the handler's open DLQ records; the gauge has no service label. */
const DLQ_FORMAT = `sum(${OBSERVE_METRIC_NAMES.dlqBacklog}{handler=%q})`;

/**
 * The context annotations of `a` (`hot_uuids`, `dlq_backlog`) as Prometheus templates, or none when
 * it is not evaluated per service and handler. An empty query says what was not found, never "0".
 */
export function contextAnnotations(a: AlertThreshold): Record<string, string> {
  if (!(a.by.includes("service") && a.by.includes("handler"))) return {};
  return {
    hot_uuids:
      `{{ with query (printf "${HOT_FORMAT}" $labels.service $labels.handler) }}` +
      `{{ range $i, $s := . }}{{ if $i }}, {{ end }}{{ $s.Labels.uuid }} ({{ $s.Value | printf "%.0f" }} copies){{ end }}` +
      `{{ else }}none exported (no ${HOT_UUID_METRICS.copies} series for this handler){{ end }}`,
    dlq_backlog:
      `{{ with query (printf "${DLQ_FORMAT}" $labels.handler) }}{{ range . }}{{ .Value | printf "%.0f" }} open DLQ records{{ end }}` +
      `{{ else }}not measured (no ${OBSERVE_METRIC_NAMES.dlqBacklog} series for this handler){{ end }}`,
  };
}
