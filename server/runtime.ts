/**
 * The process's consumer runtime, built once from `config()` and kept on `globalThis` (Next.js
 * evaluates modules once per bundle: `instrumentation.ts` and each route handler must share one
 * demo and one workshop runner): the transport, the consumer's Redis client, the live demo and
 * the workshop runner.
 */
import { registerEmbeddedLog } from "@/server/observe/records/memory-reader";
import { MemoryTransport } from "@/server/transport";
import { config } from "./config";
import { appRegistry, workshopRegistry } from "./registry";
import { WORKSHOP_SERVICE } from "@/names/product";
import { DemoService } from "@/server/demo/demo";
import { DEMO_HANDLER_SPECS } from "@/server/notification/demo-handlers";
import { envOptionsFromConfig, scenarioEnv } from "@/server/workshop/env";
import { createDedupRedis, type RedisClient } from "./dedup-redis";
import { createDedupStore } from "./dedup-store";
import type { ScenarioEnv } from "@/server/workshop/scenario-context";
import {
  countPush,
  MemorySideEffectStore,
  sideEffectCounters,
  type PushObserver,
} from "@/server/notification/side-effects";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import { WorkshopRunner } from "@/server/workshop/workshop";

/** What the runtime holds. */
export interface ConsumerRuntime {
  mode: "embedded" | "real";
  redis?: RedisClient;
  /** The live demo (not started when DEMO=off). */
  demo: DemoService;
  workshop: WorkshopRunner;
  /** Stops the demo and closes the clients. */
  close(): Promise<void>;
}

type G = typeof globalThis & { __dedupHealthConsumer?: ConsumerRuntime };

/** The runtime (created on first call). */
export function consumerRuntime(): ConsumerRuntime {
  const g = globalThis as G;
  if (g.__dedupHealthConsumer) return g.__dedupHealthConsumer;
  const c = config();
  const registry = appRegistry();
  const opts = envOptionsFromConfig(c);
  // Redis or in-process, decided in one place; an in-process store is registered for the key browser.
  const dedup = createDedupStore(opts.redisTarget, { inspect: true });
  const redis = dedup.redis;
  // Workshop runs get a Redis client of their own: the demo's Redis cut-off must not touch them.
  const workshopRedis = opts.redisTarget ? createDedupRedis(opts.redisTarget, "dedup-health-workshop") : undefined;
  const counters = sideEffectCounters(registry);
  // A series from the start (0, not absent) for each demo handler: the ground-truth panel shows 0.
  for (const h of DEMO_HANDLER_SPECS) {
    counters.sent.labels({ handler: h.name }).inc(0);
    counters.duplicate.labels({ handler: h.name }).inc(0);
    counters.absorbed.labels({ handler: h.name }).inc(0);
  }
  // A delivery counts in sent (and duplicate); a re-send the provider absorbed by key only in absorbed.
  const observe: PushObserver = (handler, _id, r) => countPush(counters, handler, r);
  // Workshop runs count on the workshop's own registry, never on the one /api/metrics serves: a
  // run's topic carries its run id, and production alerts and the Overview must not see a scenario.
  const wsRegistry = workshopRegistry();
  const wsCounters = sideEffectCounters(wsRegistry);
  const observeWorkshop: PushObserver = (handler, _id, r) => countPush(wsCounters, handler, r);
  const env: ScenarioEnv & { close(): Promise<void> } = scenarioEnv({
    ...opts,
    redis: workshopRedis,
    service: WORKSHOP_SERVICE,
    registry: wsRegistry,
    observePush: observeWorkshop,
  });
  // Embedded: the message view and the DLQ page read the demo's topics from this broker.
  if (env.transport instanceof MemoryTransport) registerEmbeddedLog(env.transport.broker);
  const store = c.DATABASE_URL
    ? new PostgresSideEffectStore({
        connectionString: c.DATABASE_URL,
        schema: "public",
        tablePrefix: c.SERVICE_NAME,
        observe,
      })
    : new MemorySideEffectStore(observe);
  const demo = new DemoService({
    transport: env.transport,
    repository: dedup.repository,
    redis,
    store,
    service: c.SERVICE_NAME,
    topic: c.DEMO_TOPIC,
    dlqTopic: c.demoDlqTopic,
    registry,
    ratePerSec: c.DEMO_RATE,
  });
  const rt: ConsumerRuntime = {
    mode: c.mode,
    redis,
    demo,
    workshop: new WorkshopRunner(() => env),
    close: async () => {
      await demo.stop();
      await store.close();
      await env.close();
      dedup.close();
      workshopRedis?.disconnect();
      registerEmbeddedLog(null);
      delete g.__dedupHealthConsumer;
    },
  };
  g.__dedupHealthConsumer = rt;
  return rt;
}

/**
 * Starts the live demo consumer (idempotent) and stops it gracefully on SIGTERM / SIGINT: the
 * in-flight messages finish, acked offsets are committed, the consumers leave their groups.
 */
export async function startDemo(): Promise<ConsumerRuntime> {
  const rt = consumerRuntime();
  await rt.demo.start();
  installShutdown(rt);
  return rt;
}

let shutdownInstalled = false;

function installShutdown(rt: ConsumerRuntime): void {
  if (shutdownInstalled) return;
  shutdownInstalled = true;
  const onSignal = (sig: NodeJS.Signals) => {
    console.log(`[dedup-health] ${sig}: stopping the demo consumer (finishing in-flight work, committing)`);
    void rt
      .close()
      .catch((e) => console.error(`[dedup-health] shutdown: ${(e as Error).message}`))
      .finally(() => process.exit(0));
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}
