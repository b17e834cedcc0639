import { Router, type HandlerConfig } from "@/server/dedup";

/**
 * A Router with one handler named `h`, as `config` says, that drops handler errors (the test reads
 * the delivery outcomes, the store or the metrics instead).
 */
export function oneHandlerRouter(config: Omit<HandlerConfig, "name">): Router {
  const router = new Router({ onError: () => undefined });
  router.addHandler({ name: "h", ...config });
  return router;
}
