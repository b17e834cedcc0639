/**
 * Which payloads a request may see whole: the principal's `unmasked` permission for the service
 * that consumes a record's topic, turned into the {@link Masker} every record answer applies.
 */
import { DLQ_TOPIC_SUFFIX } from "@/names/dlq";
import { may, principalOf, type Principal } from "@/server/auth/principal";
import { config } from "@/server/config";
import { declaredHandlers } from "../core/handler-registry";
import { maskerOf, UNMASKED, type Masker } from "./masking";

/**
 * The service whose handlers consume `topic` (a DLQ topic: its origin topic), when exactly one
 * declares it; `undefined` when none or several do (then only an app-wide `unmasked` counts).
 */
export function serviceOfTopic(topic: string): string | undefined {
  const origin = topic.endsWith(DLQ_TOPIC_SUFFIX) ? topic.slice(0, -DLQ_TOPIC_SUFFIX.length) : topic;
  const services = new Set(
    declaredHandlers()
      .filter((h) => (h.topic ?? h.info?.topic) === origin)
      .map((h) => h.service),
  );
  return services.size === 1 ? [...services][0] : undefined;
}

/** The masker of a principal: `MASK_RULES` applied to every record of a service it may not see unmasked. */
export function maskerOfPrincipal(p: Principal): Masker {
  return maskerOf(config().MASK_RULES, (topic) => may(p, "unmasked", serviceOfTopic(topic)));
}

/** The masker of `req`'s principal ({@link maskerOfPrincipal}); without rules the principal is not looked up. */
export async function maskerFor(req: Request): Promise<Masker> {
  if (config().MASK_RULES.length === 0) return UNMASKED;
  return maskerOfPrincipal(await principalOf(req));
}
