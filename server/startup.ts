import { config, ConfigError, type AppConfig } from "./config";

/**
 * Server start-up: validate the configuration (an invalid variable stops the process with a message
 * naming it), then start the background work: the dashboard's observers (metrics sampling, key
 * counts) and the demo consumer, unless DEMO=off.
 */
export async function startup(): Promise<void> {
  try {
    config();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`[dedup-health] ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
  // Who may change state (token / this machine / read-only / embedded-open), said once.
  const { accessSummary } = await import("./access");
  console.log(`[dedup-health] access: ${accessSummary(config())}`);
  // The embedded metrics history and the first key count start at boot, not at the first page view.
  const { startObserve } = await import("./observe");
  startObserve();
  if (config().DEMO === "on") {
    await registerDemoHandlers(config());
    startDemoInBackground();
  }
}

/**
 * Tells the dashboard which handlers the demo service runs (lint, TTL classes for the capacity
 * projection, key-lookup prefixes): the observe side only reads the registry, start-up fills it.
 * Registered before the consumer connects, so the dashboard knows them while Kafka is still down.
 * The setups as deployed: Redis store in real mode, in-memory in embedded mode, one replica.
 */
export async function registerDemoHandlers(c: Pick<AppConfig, "mode" | "SERVICE_NAME">): Promise<void> {
  const [{ registerHandlers }, { DEMO_TOPIC, demoHandlerSetups }] = await Promise.all([import("./observe/handler-registry"), import("@/server/notification/demo-handlers")]);
  registerHandlers(demoHandlerSetups(c.mode === "real" ? "redis" : "memory", 1).map((setup) => ({ service: c.SERVICE_NAME, topic: DEMO_TOPIC, setup })));
}

/**
 * Starts the demo consumer without holding up the server: if Kafka or Redis is not reachable yet,
 * it logs why and tries again every 10 s (the dashboard's health endpoint shows the component down).
 */
function startDemoInBackground(attempt = 1): void {
  void import("./runtime")
    .then(({ startDemo }) => startDemo())
    .then((rt) => console.log(`[dedup-health] demo consumer started (${rt.mode} mode)`))
    .catch((e: unknown) => {
      console.error(`[dedup-health] demo consumer did not start (attempt ${attempt}): ${e instanceof Error ? e.message : String(e)}; retrying in 10 s`);
      setTimeout(() => startDemoInBackground(attempt + 1), 10_000).unref();
    });
}
