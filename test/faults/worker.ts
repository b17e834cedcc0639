/**
 * The consumer process the fault cases start, kill and restart: one replica of the demo
 * `notification` service's handler code (server/notification: `notificationHandler` with its
 * PostgreSQL side effects, `buildStack` in the spec's order, the kafkajs `KafkaSubscriber`) on the
 * suite's own broker and redis-server, every handler in its own consumer group.
 *
 * Run: `node --import tsx test/faults/worker.ts` with `FAULT_WORKER` = JSON {@link WorkerConfig}.
 * Prints `READY <replica>` once every handler joined its group; serves its prom-client registry on
 * `metricsPort` (`GET /metrics`); on SIGTERM finishes in-flight work, commits, leaves and exits 0.
 */
import { createServer } from "node:http";
import { Registry } from "prom-client";
import { Pool } from "pg";
import {
  failClosed,
  failOpen,
  dedupMetrics,
  inbox,
  inboxTransaction,
  PostgresInboxRepository,
  RedisRepository,
  retry,
  type Handler,
  type Middleware,
  type RetryOptions,
  Router,
} from "@/server/dedup";
import { pgInboxPool } from "@/server/dedup-postgres";
import { INBOX_EFFECTS, INBOX_TABLE } from "./lib/inbox";
import { createDedupRedis } from "@/server/dedup-redis";
import { KafkaPublisher } from "@/server/transport/kafka-publisher";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { buildStack, notificationHandler } from "@/server/notification/service";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import { relayConfig, type RelaySpec } from "./lib/relay";

/** One handler of the worker. */
export interface WorkerHandler {
  /** Handler name: key prefix `<service>:dedup:<name>`, side-effect table, metric label. */
  name: string;
  /** The handler's failure mode (spec §4). */
  mode: "open" | "closed";
  /** Consumer group. */
  groupId: string;
  /** A Kafka-to-Kafka handler instead of the notification one (lib/relay.ts). */
  relay?: RelaySpec;
}

/** What the worker is told (env FAULT_WORKER, JSON). */
export interface WorkerConfig {
  replica: string;
  brokers: string[];
  redisUrl: string;
  databaseUrl: string;
  /** PostgreSQL schema of this run's side-effect tables. */
  schema: string;
  service: string;
  topic: string;
  dlqTopic: string;
  handlers: WorkerHandler[];
  /** Deduplicator lease (a SIGKILLed owner's keys free themselves after it). */
  leaseMs: number;
  /** Deduplicator per-call timeout (`redis_timeout` above it). */
  timeoutMs: number;
  retry: RetryOptions;
  sessionTimeoutMs: number;
  chunkSize: number;
  /** 0 = no metrics endpoint. */
  metricsPort: number;
  /**
   * `redis` (default): the demo's stack and handler over Redis dedup. `inbox`: the PostgreSQL
   * inbox ({@link INBOX_TABLE} in `schema`, created by the case) with Retry outside it, and a
   * handler whose one side effect is a row `(handler, uuid)` in `<schema>.{@link INBOX_EFFECTS}`
   * (no unique key: a second run would show as a second row), written in the inbox's transaction.
   */
  store?: "redis" | "inbox";
}

const cfg = JSON.parse(process.env.FAULT_WORKER ?? "null") as WorkerConfig | null;
if (!cfg) {
  console.error("FAULT_WORKER (JSON WorkerConfig) is required");
  process.exit(2);
}

async function main(c: WorkerConfig): Promise<void> {
  const registry = new Registry();
  const errors = dedupMetrics(registry).errors;
  const redis = createDedupRedis({ url: c.redisUrl }, `faults-${c.replica}`);
  const repo = new RedisRepository(redis);
  // One client per concurrent delivery (3 partitions per handler), plus one.
  const store = new PostgresSideEffectStore({
    connectionString: c.databaseUrl,
    schema: c.schema,
    tablePrefix: "f",
    poolSize: 3 * c.handlers.length + 1,
  });
  const publisher = new KafkaPublisher({ brokers: c.brokers, clientId: `faults-${c.replica}` });
  const router = new Router({ onError: () => undefined, closeTimeoutMs: 10_000 });
  const subs: KafkaSubscriber[] = [];
  const inboxPool = c.store === "inbox" ? new Pool({ connectionString: c.databaseUrl, max: 8 }) : null;
  inboxPool?.on("error", () => undefined);
  for (const h of c.handlers) {
    const repository = h.mode === "closed" ? failClosed(repo) : failOpen(repo);
    const viaInbox = inboxPool ? inboxSetup(c, h.name, inboxPool, registry) : null;
    const middleware =
      viaInbox?.middleware ??
      buildStack(
        {
          order: "spec",
          retry: c.retry,
          dedup: {
            repository,
            service: c.service,
            ttlMs: 86_400_000,
            leaseMs: c.leaseMs,
            timeoutMs: c.timeoutMs,
            marking: "lease",
            registry,
          },
        },
        publisher,
        c.dlqTopic,
      );
    const sub = new KafkaSubscriber({
      brokers: c.brokers,
      groupId: h.groupId,
      replica: c.replica,
      sessionTimeoutMs: c.sessionTimeoutMs,
      heartbeatIntervalMs: 1000,
      chunkSize: c.chunkSize,
      dlq: { publisher, topic: c.dlqTopic },
      onUnreadable: () => errors.inc({ service: c.service, reason: "marshal" }),
      transactions: h.relay?.transactions === true,
    });
    subs.push(sub);
    if (h.relay) {
      router.addHandler(relayConfig({ name: h.name, topic: c.topic }, h.relay, sub, publisher, middleware));
      continue;
    }

    router.addHandler({
      name: h.name,
      topic: c.topic,
      subscriber: sub,
      handler: viaInbox?.handler ?? notificationHandler(h.name, store, () => ({ idempotent: true })),
      middleware,
    });
  }
  const metrics = c.metricsPort
    ? createServer((_req, res) => {
        void registry.metrics().then((body) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(body);
        });
      }).listen(c.metricsPort, "127.0.0.1")
    : null;

  let stopping = false;
  const stop = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`STOPPING ${c.replica} (${sig})`);
    await router.close().catch(() => undefined);
    await Promise.all(subs.map((s) => s.close().catch(() => undefined)));
    await publisher.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    await inboxPool?.end().catch(() => undefined);
    redis.disconnect();
    metrics?.close();
    console.log(`STOPPED ${c.replica}`);
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));

  const run = router.run();
  run.catch((e: unknown) => {
    console.error(`router failed: ${(e as Error)?.message ?? e}`);
    process.exit(3);
  });
  await router.running;
  console.log(`READY ${c.replica}`);
}

/** `store: "inbox"`: Retry over the inbox, and the handler that writes its one row in the inbox's transaction. */
function inboxSetup(
  c: WorkerConfig,
  name: string,
  pool: Pool,
  registry: Registry,
): { middleware: Middleware[]; handler: Handler } {
  const repository = new PostgresInboxRepository(pgInboxPool(pool), { schema: c.schema, table: INBOX_TABLE });
  const effects = `"${c.schema}"."${INBOX_EFFECTS}"`;
  return {
    middleware: [retry(c.retry), inbox({ repository, service: c.service, lockTimeoutMs: c.leaseMs, registry })],
    handler: async (msg) => {
      await inboxTransaction(msg).query(`INSERT INTO ${effects} (handler, uuid) VALUES ($1, $2)`, [name, msg.uuid]);
    },
  };
}

main(cfg).catch((e: unknown) => {
  console.error(`worker failed: ${(e as Error)?.stack ?? e}`);
  process.exit(1);
});
