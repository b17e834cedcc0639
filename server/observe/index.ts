/**
 * The dashboard backend: metrics (Prometheus or the app's own registry), alert state, Redis key
 * inspection, capacity projection and lint, as typed functions the thin `app/api/**` routes call.
 * Node-only; imports nothing from next, react, app/ or components/.
 */
export { observeContext, setObserveContext, createObserveContext, startObserve, type ObserveContext } from "./context";
export { getOverview } from "./overview";
export { getSeries, getAlerts } from "./series";
export { getCapacity } from "./capacity";
export { getLint } from "./lint";
export { getHandlers, browseKeys, lookupKey } from "./keys/browser";
export { registerHandlers, declaredHandlers, type DeclaredHandler } from "./handler-registry";
export { observeRedis, createObserveRedis, whenReady, type RedisLike } from "./redis-client";
export { upstreamCalls } from "./upstream-counter";
