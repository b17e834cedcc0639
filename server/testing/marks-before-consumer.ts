/**
 * A consumer that follows the design note literally, for the conformance kit to fail: kafkajs and
 * ioredis used directly, `SET <service>:dedup:<handler>:<uuid> "1" NX PX 24h` BEFORE the handler and
 * never released, the note's four metrics, and a DLQ copy with Watermill's poison headers when the
 * handler fails. What it loses (spec §10): a message whose handler failed is swallowed when it comes
 * again. It describes itself honestly (`dedup_handler_info{marking="before"}`).
 */
import { createServer } from "node:http";
import { Kafka, logLevel } from "kafkajs";
import { Redis } from "ioredis";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import {
  DEDUP_ERROR_REASONS,
  METRIC_NAMES,
  PROCESSED_RESULTS,
  WATERMILL_UUID_HEADER,
  poisonedMetadata,
} from "@/names/dedup";
import { CONTRACT_VERSION, HANDLER_INFO_METRIC } from "@/names/contract";
import { TTL_POLICY, dedupKeyPrefix } from "@/names/keys";
import { dlqTopicOf } from "@/names/dlq";
import { CHECK_DURATION_BUCKETS } from "@/server/dedup";
import { closeServer, listenOnFreePort } from "./net";

/** Where the fixture consumes and writes. */
export interface MarksBeforeOptions {
  brokers: readonly string[];
  redisUrl: string;
  topic: string;
  service: string;
  handler: string;
}

/** A running fixture: its `/metrics` URL, its consumer group, and its stop. */
export interface MarksBeforeConsumer {
  metricsUrl: string;
  group: string;
  stop(): Promise<void>;
}

function metrics(o: MarksBeforeOptions, group: string) {
  const registry = new Registry();
  const registers = [registry];
  const m = {
    registry,
    processed: new Counter({
      name: METRIC_NAMES.processed,
      help: "processed",
      labelNames: ["service", "topic", "handler", "result"],
      registers,
    }),
    deduplicated: new Counter({
      name: METRIC_NAMES.deduplicated,
      help: "deduplicated",
      labelNames: ["service", "topic", "handler"],
      registers,
    }),
    check: new Histogram({
      name: METRIC_NAMES.checkDuration,
      help: "check",
      labelNames: ["service"],
      buckets: [...CHECK_DURATION_BUCKETS],
      registers,
    }),
    errors: new Counter({ name: METRIC_NAMES.errors, help: "errors", labelNames: ["service", "reason"], registers }),
  };
  const info = new Gauge({
    name: HANDLER_INFO_METRIC,
    help: "info",
    labelNames: [
      "service",
      "handler",
      "topic",
      "group",
      "prefix",
      "ttl_ms",
      "marking",
      "failure_mode",
      "stack",
      "runtime",
      "contract",
    ],
    registers,
  });
  const w = { service: o.service, topic: o.topic, handler: o.handler };
  for (const result of PROCESSED_RESULTS) m.processed.inc({ ...w, result }, 0);
  m.deduplicated.inc(w, 0);
  for (const reason of DEDUP_ERROR_REASONS) m.errors.inc({ service: o.service, reason }, 0);
  m.check.zero({ service: o.service });
  info.set(
    {
      ...w,
      group,
      prefix: dedupKeyPrefix(o.service, o.handler),
      ttl_ms: String(TTL_POLICY.defaultMs),
      marking: "before",
      failure_mode: "open",
      stack: "deduplicator",
      runtime: "node",
      contract: CONTRACT_VERSION,
    },
    1,
  );
  return m;
}

/** Starts the fixture; resolves once its consumer joined its group (`<service>.<handler>`). */
export async function startMarksBeforeConsumer(o: MarksBeforeOptions): Promise<MarksBeforeConsumer> {
  const group = `${o.service}.${o.handler}`;
  const m = metrics(o, group);
  const server = createServer(
    (_req, res) =>
      void m.registry.metrics().then((t) => res.writeHead(200, { "content-type": m.registry.contentType }).end(t)),
  );
  const port = await listenOnFreePort(server);
  const redis = new Redis(o.redisUrl);
  const kafka = new Kafka({ clientId: "marks-before", brokers: [...o.brokers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, rebalanceTimeout: 10_000 });
  await Promise.all([producer.connect(), consumer.connect()]);
  const joined = new Promise<void>((r) => consumer.on(consumer.events.GROUP_JOIN, () => r()));
  await consumer.subscribe({ topic: o.topic, fromBeginning: true });
  const w = { service: o.service, topic: o.topic, handler: o.handler };
  await consumer.run({
    eachMessage: async ({ message }) => {
      const uuid = message.headers?.[WATERMILL_UUID_HEADER]?.toString() ?? "";
      const t0 = performance.now();
      // The design note: mark first, then run the handler.
      const set = await redis.set(
        `${dedupKeyPrefix(o.service, o.handler)}:${uuid}`,
        "1",
        "PX",
        TTL_POLICY.defaultMs,
        "NX",
      );
      m.check.observe({ service: o.service }, (performance.now() - t0) / 1000);
      if (set === null) {
        m.deduplicated.inc(w);
        m.processed.inc({ ...w, result: "deduplicated" });
        return;
      }
      try {
        JSON.parse(message.value?.toString() ?? "");
        m.processed.inc({ ...w, result: "success" });
      } catch (e) {
        const headers = {
          ...message.headers,
          ...poisonedMetadata({
            reason: (e as Error).message,
            reasonClass: "non_retryable",
            topic: o.topic,
            handler: o.handler,
            subscriber: "marks-before",
          }),
        };
        await producer.send({ topic: dlqTopicOf(o.topic), messages: [{ value: message.value, headers }] });
        m.processed.inc({ ...w, result: "error" });
      }
    },
  });
  await joined;
  return {
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
    group,
    async stop() {
      await consumer.disconnect();
      await producer.disconnect();
      redis.disconnect();
      await closeServer(server);
    },
  };
}
