/**
 * `npm run worker` — one replica of the demo service `notification` as its own process: the same
 * handlers, stack, consumer groups and Redis as the replica inside the Next.js server, so starting
 * and stopping workers moves partitions between processes (a real rebalance, spec §1).
 *
 *   npm run worker                                  # a replica; Ctrl-C / SIGTERM stops it gracefully
 *   npm run worker -- --name w2                     # replica name (default <hostname>-<pid>)
 *   npm run worker -- --crash-before-commit         # exits after its first handled batch, before committing
 *   npm run worker -- --metrics-port 9465           # serves its metrics on http://127.0.0.1:9465/metrics
 *
 * Needs KAFKA_BROKERS (and REDIS_URL or REDIS_CLUSTER_NODES for a shared dedup store); DATABASE_URL
 * for the side-effect table shared with the server. No traffic is published (DEMO_RATE is the
 * server's); SIGTERM/SIGINT: finish the in-flight message, commit acked offsets, leave the groups.
 */
import { Registry } from "prom-client";
import { config, ConfigError } from "@/server/config";
import { DemoService } from "@/server/demo/demo";
import { envOptionsFromConfig } from "@/server/workshop/env";
import { createDedupStore } from "@/server/dedup-store";
import { processReplicaId } from "@/server/transport/replica-id";
import { MemorySideEffectStore, sideEffectCounters } from "@/server/notification/side-effects";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import { KafkaTransport } from "@/server/transport";
import { createServer } from "node:http";
import { flag, intArg, optArg } from "./lib/args";

/** The config and the environment options; exits with the reason when the worker cannot run. */
function workerConfig() {
  let c;
  try {
    c = config();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`[worker] ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
  const opts = envOptionsFromConfig(c);
  if (!opts.kafkaBrokers?.length) {
    console.error(
      "[worker] KAFKA_BROKERS is not set: a standalone worker needs Kafka (the embedded broker lives inside the server process). Run `npm run stack:up` and set KAFKA_BROKERS=127.0.0.1:9092.",
    );
    process.exit(1);
  }
  if (!opts.redisTarget)
    console.warn(
      "[worker] REDIS_URL is not set: this worker dedups with its own in-process map — the in-process-cache anti-pattern (spec §9.4).",
    );
  return { c, opts, kafkaBrokers: opts.kafkaBrokers };
}

/** Its own /metrics (a process of the fleet that Prometheus or the conformance kit scrapes); 0 = none. */
function serveMetrics(registry: Registry, metricsPort: number): void {
  if (metricsPort <= 0) return;
  const server = createServer((req, res) => {
    if (req.url !== "/metrics") return void res.writeHead(404).end("only /metrics\n");
    void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text));
  });
  server.once("error", (e) => {
    console.error(`[worker] --metrics-port ${metricsPort}: ${e.message} (choose a free port)`);
    process.exit(1);
  });
  server.listen(metricsPort, "127.0.0.1");
  server.unref();
}

/** The side-effect table shared with the server (PostgreSQL with DATABASE_URL), else an in-process one. */
function sideEffectStore(c: ReturnType<typeof config>, counters: ReturnType<typeof sideEffectCounters>) {
  return c.DATABASE_URL
    ? new PostgresSideEffectStore({
        connectionString: c.DATABASE_URL,
        schema: "public",
        tablePrefix: c.SERVICE_NAME,
        observe: (h, _id, r) => (
          counters.sent.inc({ handler: h }),
          r.duplicate && counters.duplicate.inc({ handler: h })
        ),
      })
    : new MemorySideEffectStore();
}

/** On SIGTERM or SIGINT, once: finish in-flight work, commit, leave the groups, close everything, exit 0. */
function stopOnSignals(name: string, close: () => Promise<void>): void {
  let stopping = false;
  const stop = (sig: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[worker ${name}] ${sig}: finishing in-flight work, committing, leaving the groups`);
    void (async () => {
      await close();
      console.log(`[worker ${name}] stopped`);
      process.exit(0);
    })();
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

async function main(): Promise<void> {
  const { c, opts, kafkaBrokers } = workerConfig();
  // <hostname>-<pid>: unique across hosts (group members, DLQ headers, dedup_consumer_info).
  const name = optArg("name") ?? processReplicaId();
  const crash = flag("crash-before-commit");
  const registry = new Registry();
  const counters = sideEffectCounters(registry);
  serveMetrics(registry, intArg("metrics-port", 0, 0, 65_535));
  const dedup = createDedupStore(opts.redisTarget, { clientName: `dedup-health-${name}` });
  const store = sideEffectStore(c, counters);
  const transport = new KafkaTransport(kafkaBrokers);
  const demo = new DemoService({
    transport,
    repository: dedup.repository,
    redis: dedup.redis,
    store,
    service: c.SERVICE_NAME,
    topic: c.DEMO_TOPIC,
    dlqTopic: c.demoDlqTopic,
    registry,
    ratePerSec: 0,
    replicaName: name,
    beforeCommit: crash
      ? (acked) => {
          console.log(
            `[worker ${name}] handled ${acked.length} message(s); exiting before the offset commit (--crash-before-commit)`,
          );
          process.exit(3);
        }
      : undefined,
  });
  await demo.start();
  console.log(
    `[worker ${name}] consuming ${c.SERVICE_NAME} handlers from ${c.DEMO_TOPIC} (Kafka ${kafkaBrokers.join(",")}, dedup store ${dedup.kind === "redis" ? "Redis" : "in-process"})`,
  );
  const status = setInterval(async () => {
    const sent = (await counters.sent.get()).values.reduce((a, v) => a + v.value, 0);
    console.log(`[worker ${name}] pushes sent so far: ${sent}`);
  }, 30_000);
  status.unref();
  stopOnSignals(name, async () => {
    await demo.stop();
    await transport.close();
    await store.close();
    dedup.close();
  });
}

void main().catch((e: unknown) => {
  console.error(`[worker] ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
