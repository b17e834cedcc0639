/**
 * The services a DLQ action concerns, for the role check before it is done: those whose declared
 * handlers (server/observe/core/handler-registry.ts) consume the DLQ's origin topic — narrowed to the
 * handler the action names, when it names one. A DLQ no declared handler consumes belongs to the
 * app's own `SERVICE_NAME`, as its chart markers already do (`redriveScope`).
 */
import { DLQ_TOPIC_SUFFIX } from "@/names/dlq";
import { config } from "@/server/config";
import { declaredHandlers } from "@/server/observe/core/handler-registry";

/** The services an action on DLQ topic `dlqTopic` (default: the first of `CONSUMER_TOPICS`) for `handler` needs `write` on. */
export function dlqServices(dlqTopic: string | undefined, handler?: string): string[] {
  const c = config();
  const origin = dlqTopic?.endsWith(DLQ_TOPIC_SUFFIX)
    ? dlqTopic.slice(0, -DLQ_TOPIC_SUFFIX.length)
    : (c.CONSUMER_TOPICS[0] ?? c.DEMO_TOPIC);
  const on = declaredHandlers().filter(
    (h) => (h.topic ?? h.info?.topic) === origin && (handler === undefined || h.setup.handler === handler),
  );
  const services = [...new Set(on.map((h) => h.service))].sort();
  return services.length > 0 ? services : [c.SERVICE_NAME];
}
