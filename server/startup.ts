import { config, ConfigError, type AppConfig } from "./config";
import { DEMO_TOPIC } from "@/names/product";

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
  // The audit trail's table is made before any action runs; an unreachable DATABASE_URL is said at once, by name.
  try {
    const { initAudit } = await import("./audit");
    console.log(
      `[dedup-health] audit trail: ${(await initAudit()) === "postgres" ? "PostgreSQL (DATABASE_URL)" : "in memory (DATABASE_URL is not set: lost at restart)"}`,
    );
  } catch (e) {
    console.error(
      `[dedup-health] error: ${e instanceof Error ? e.message : String(e)}; until it answers, the audit page says "audit store unavailable" and every action that changes state is refused (503)`,
    );
  }
  // Who may change state (token / this machine / read-only / embedded-open), said once.
  const { accessSummary } = await import("./access");
  console.log(`[dedup-health] access: ${accessSummary(config())}`);
  await limitHttpServer(config());
  // Several replicas on one database elect the one that exports the scrape-time gauges; decided before they are registered.
  const { startReplicas } = await import("./replicas");
  await startReplicas(config());
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
export async function registerDemoHandlers(
  c: Pick<AppConfig, "mode" | "SERVICE_NAME"> & Partial<Pick<AppConfig, "DEMO_TOPIC">>,
): Promise<void> {
  const [{ registerHandlers }, { demoHandlerSetups }] = await Promise.all([
    import("./observe/core/handler-registry"),
    import("@/server/notification/demo-handlers"),
  ]);
  registerHandlers(
    demoHandlerSetups(c.mode === "real" ? "redis" : "memory", 1).map((setup) => ({
      service: c.SERVICE_NAME,
      topic: c.DEMO_TOPIC ?? DEMO_TOPIC,
      setup,
    })),
  );
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
      console.error(
        `[dedup-health] demo consumer did not start (attempt ${attempt}): ${e instanceof Error ? e.message : String(e)}; retrying in 10 s`,
      );
      setTimeout(() => startDemoInBackground(attempt + 1), 10_000).unref();
    });
}

/**
 * Puts the request deadlines and the connection cap of server/http-limits.ts on the HTTP server of
 * this process (`next start`'s), and says so; warns when there is none in this process.
 */
async function limitHttpServer(c: AppConfig): Promise<void> {
  const { applyHttpLimits, findListeningServer } = await import("./http-limits");
  const server = findListeningServer();
  if (!server) {
    console.warn(
      "[dedup-health] http limits: no listening HTTP server in this process; request deadlines and the connection cap are Node's defaults (300 s, none)",
    );
    return;
  }
  const l = applyHttpLimits(server, {
    headersTimeoutMs: c.HTTP_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: c.HTTP_BODY_TIMEOUT_MS,
    maxConnections: c.HTTP_MAX_CONNECTIONS,
  });
  console.log(
    `[dedup-health] http limits: headers within ${l.headersTimeoutMs} ms, a body within ${l.bodyTimeoutMs} ms of them, at most ${l.maxConnections} connections`,
  );
}
