import type { Registry } from "prom-client";
import type { Observe } from "../metrics/handler-time-histogram";
import { perMessageForm } from "../router/batch-run";
import { namedMiddleware, type Handler, type Middleware } from "../message";
import { dedupMetrics } from "../metrics/metrics";

/** Options of {@link handlerTimer}. */
export interface HandlerTimerOptions {
  /** prom-client Registry of `handler_execution_time_seconds` (never the global one). Required. */
  registry: Registry;
  /** The `service` label (the Deduplicator's `service`). @default "app" */
  service?: string;
  /** Monotonic clock in ms. @default performance.now */
  now?: () => number;
}

/** Defaults of {@link HandlerTimerOptions}. */
export const DEFAULT_HANDLER_TIMER_OPTIONS = {
  service: "app",
  now: () => performance.now(),
} as const satisfies Omit<Required<HandlerTimerOptions>, "registry">;

/**
 * Times each handler attempt into `handler_execution_time_seconds{service,handler,success}`
 * (Watermill's histogram; `handler` is the Router's handler name, `success` `"true"` / `"false"`).
 * Put it **innermost** (`defaultStack` does when the Deduplicator has a registry): it then times the
 * handler itself, once per attempt, not Retry's backoff or the store's round trips — the time a
 * lease must outlive. A handler that keeps running after `timeout` gave the attempt up is observed
 * when it really ends. Creates both series of a handler at 0 when the Router registers it.
 * @throws RangeError for a missing registry or a service with spaces or ':'.
 */
export function handlerTimer(options: HandlerTimerOptions): Middleware {
  const o = {
    ...DEFAULT_HANDLER_TIMER_OPTIONS,
    ...options,
    service: options.service ?? DEFAULT_HANDLER_TIMER_OPTIONS.service,
    now: options.now ?? DEFAULT_HANDLER_TIMER_OPTIONS.now,
  };
  if (!o.registry || typeof o.registry.getSingleMetric !== "function")
    throw new RangeError("handlerTimer: registry must be a prom-client Registry");
  if (!/^[^\s:]+$/.test(o.service))
    throw new RangeError("handlerTimer: service must be non-empty, without spaces or ':'");
  const histogram = dedupMetrics(o.registry).handlerTime;
  const byHandler = new Map<string, readonly [Observe, Observe]>();
  const observers = (handler: string) => {
    let obs = byHandler.get(handler);
    if (!obs) byHandler.set(handler, (obs = histogram.handler(o.service, handler)));
    return obs;
  };
  const now = o.now;
  const wrap =
    (next: Handler): Handler =>
    async (msg) => {
      const [ok, failed] = observers(msg.context.handler ?? "unknown");
      const start = now();
      try {
        const out = await next(msg);
        ok((now() - start) / 1000);
        return out;
      } catch (e) {
        failed((now() - start) / 1000);
        throw e;
      }
    };
  return namedMiddleware("handlerTimer", wrap, {
    onRegister: (h) => void observers(h.name),
    batch: perMessageForm(wrap),
  });
}
