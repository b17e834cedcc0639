/**
 * A one-handler consumer on real Kafka and Redis whose handler can be switched "buggy" — the
 * after-a-bug workflows of the DLQ browser and the key actions run against it: the notification
 * handler (side effects in PostgreSQL, one row per event) behind the spec's stack (PoisonQueue →
 * DLQ, Deduplicator with lease marking on Redis).
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { Pool } from "pg";
import { Registry } from "prom-client";
import { RedisRepository, type Message } from "@/server/dedup";
import { buildStack, notificationHandler, Replica } from "@/server/notification/service";
import { PostgresSideEffectStore } from "@/server/notification/postgres-side-effects";
import type { KafkaTransport } from "@/server/transport";
import { handlerGroupId } from "@/names/kafka";

/** PostgreSQL of the local stack (trust auth). */
export const TEST_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

/** What {@link startBuggyConsumer} runs. */
export interface BuggyConsumer {
  service: string;
  handler: string;
  /** `fail(msg)` true → the handler throws before its side effect (after the retries: the DLQ, `handler_error`). */
  fail: (msg: Message) => boolean;
  /** `swallow` true → the handler returns without its side effect (the "bug" that loses messages silently). */
  swallow: boolean;
  /** Rows of the side-effect table for `uuid` (0 or 1: one per processed event). */
  rows(uuid?: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts one replica on `topic` (DLQ `dlqTopic`) with its own service name, group and tables. */
export async function startBuggyConsumer(o: {
  transport: KafkaTransport;
  topic: string;
  dlqTopic: string;
  redis: Redis;
}): Promise<BuggyConsumer> {
  const id = randomBytes(3).toString("hex");
  const service = `act-${id}`;
  const handler = "on-event";
  const tablePrefix = `act_${id}`;
  const store = new PostgresSideEffectStore({ connectionString: TEST_DATABASE_URL, tablePrefix, poolSize: 2 });
  const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
  const c: BuggyConsumer = {
    service,
    handler,
    fail: () => false,
    swallow: false,
    rows: async (uuid) => {
      const table = `"public"."${tablePrefix}_${handler.replace(/-/g, "_")}_sent"`;
      try {
        const r = await pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${table}${uuid ? " WHERE event_id = $1" : ""}`,
          uuid ? [uuid] : [],
        );
        return Number(r.rows[0]?.n ?? 0);
      } catch {
        return 0; // the table is made at the first send
      }
    },
    stop: async () => undefined,
  };
  const inner = notificationHandler(handler, store, () => ({ idempotent: true, failBeforePush: (msg) => c.fail(msg) }));
  const stack = buildStack(
    {
      order: "spec",
      retry: { maxRetries: 1, initialIntervalMs: 20, maxIntervalMs: 50, multiplier: 2, randomizationFactor: 0 },
      dedup: {
        repository: new RedisRepository(o.redis),
        failureMode: "closed",
        service,
        ttlMs: 3_600_000,
        marking: "lease",
        registry: new Registry(),
      },
    },
    o.transport.publisher,
    o.dlqTopic,
  );
  const replica = new Replica({
    transport: o.transport,
    replica: `r-${id}`,
    handlers: [
      {
        name: handler,
        topic: o.topic,
        groupId: handlerGroupId(service, handler),
        dlqTopic: o.dlqTopic,
        handler: async (m) => (c.swallow ? undefined : inner(m)),
        middleware: stack,
      },
    ],
  });
  await replica.start();
  c.stop = async () => {
    await replica.stop();
    await o.transport.deleteGroups([handlerGroupId(service, handler)]);
    await pool
      .query(
        `DROP TABLE IF EXISTS "public"."${tablePrefix}_on_event_sent", "public"."${tablePrefix}_push_ledger", "public"."${tablePrefix}_push_keys"`,
      )
      .catch(() => undefined);
    await store.close();
    await pool.end();
  };
  return c;
}
