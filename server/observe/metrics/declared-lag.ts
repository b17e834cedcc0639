/**
 * The lag of each handler's consumer group joined by the group its `dedup_handler_info` declares
 * (docs/CONTRACT.md §5): a consumer whose group is not named `<service>.<handler>` (a Java service's
 * `billing-workers`) gets its lag on its handler's page too. Beside `consumerLagExpr` (lib/alert-exprs),
 * which joins by that naming convention.
 */
import { HANDLER_INFO_METRIC } from "@/names/dedup";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";

/**
 * PromQL of the lag (messages not consumed) per `service`, `handler` and `topic` of every consumer
 * group a handler declares in `dedup_handler_info{group}`. One handler per group is kept (`topk`),
 * so two handlers declaring one group cannot make the join fail for everyone.
 */
export function declaredGroupLagExpr(): string {
  const lag = `label_replace(sum by (consumergroup, topic, instance) (${KAFKA_METRIC_NAMES.lag}), "group", "$1", "consumergroup", "(.+)")`;
  const info = `topk by (group) (1, max by (group, service, handler) (${HANDLER_INFO_METRIC}))`;
  return `max by (service, handler, topic) (${lag} * on (group) group_left (service, handler) ${info})`;
}
