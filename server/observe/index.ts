/**
 * The dashboard backend: metrics (Prometheus or the app's own registry), alert state, Redis key
 * inspection, capacity projection and lint, as typed functions the thin `app/api/**` routes call.
 * Node-only; imports nothing from next, react, app/ or components/.
 */
export { observeContext, setObserveContext, createObserveContext, startObserve, type ObserveContext } from "./context";
export { getOverview } from "./routes/overview";
export { getSeries } from "./routes/series";
export { getAlerts } from "./routes/alerts";
export { getCapacity } from "./routes/capacity";
export { getLint } from "./routes/lint";
export { getHandlers } from "./routes/handlers";
export { browseKeys, lookupKey } from "./routes/keys";
export { registerHandlers, declaredHandlers, type DeclaredHandler } from "./core/handler-registry";
export { observeRedis, createObserveRedis, whenReady, type RedisLike } from "./redis/client";
export { upstreamCalls } from "./core/upstream-counter";
