/**
 * A reused UUID with another payload, end to end: two records with one `_watermill_message_uuid`
 * and different payloads, written by a client that is not ours (`kcat`), reach a consumer (the
 * library's default stack on real Kafka and Redis) whose counters are on the app's registry. The
 * app's `GET /api/metrics` serves them to an own Prometheus (1 s scrape and evaluation) loaded with
 * the generated rule file: the handler's conflict counter moves on `/api/metrics`, the copy lands in
 * the DLQ with the conflict reason, and `DedupPayloadConflict` fires for that service and handler.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  METRIC_NAMES,
  PAYLOAD_DIFFERENCE,
  PAYLOAD_DIFFERENCES,
  POISON_REASON_CLASS,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { payloadText, RedisRepository, Router, defaultStack } from "@/server/dedup";
import { promAlerts, promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { appRegistry } from "@/server/registry";
import { kcatProduce } from "@/server/testing/kcat";
import { ownKafka, until } from "@/server/testing/own-kafka";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { GET } from "./route";

const RULES = fileURLToPath(new URL("../../../infra/prometheus/rules/dedup.yml", import.meta.url));
const k = ownKafka();
let app: Server | undefined;
let appUrl = "";
let prom: OwnPrometheus | undefined;

beforeAll(async () => {
  // The route itself behind a plain HTTP server: what `next start` serves at /api/metrics.
  app = createServer((_req, res) => {
    void GET().then(async (r) => {
      res.writeHead(r.status, Object.fromEntries(r.headers));
      res.end(await r.text());
    });
  });
  await new Promise<void>((r) => app!.listen(0, "127.0.0.1", r));
  const port = (app.address() as AddressInfo).port;
  appUrl = `http://127.0.0.1:${port}/api/metrics`;
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${port}`],
    metricsPath: "/api/metrics",
    ruleFiles: [RULES],
    intervalSec: 1,
  });
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  await new Promise((r) => app?.close(r));
});

/** The value of `name{service,handler}` in the exposition text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([l, v]) => line.includes(`${l}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

async function firing(alert: string, labels: Record<string, string>): Promise<boolean> {
  return (await promAlerts(prom!.url)).some(
    (a) =>
      a.labels.alertname === alert &&
      a.state === "firing" &&
      Object.entries(labels).every(([l, v]) => a.labels[l] === v),
  );
}

describe("payload conflict: kcat → consumer → /api/metrics → Prometheus", () => {
  it("two kcat records with one UUID and different payloads move the handler's conflict counter on /api/metrics, land in the DLQ with the conflict reason and fire DedupPayloadConflict", async () => {
    const {
      id,
      names: [topic, dlq],
    } = await k.topics("conflictapp", { "": 1, ".dlq": 1 });
    const service = `conflictapp${id}`;
    const handler = "charge";
    const labels = { service, handler };
    // No fingerprint fields chosen: the conflict is a difference of the bytes.
    const bytes = { ...labels, difference: PAYLOAD_DIFFERENCE.bytes };
    const uuid = `01REUSED${id.toUpperCase()}`;
    k.forget(`${service}:dedup:${handler}:${uuid}`);
    const ran: string[] = [];
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: handler,
      topic: topic!,
      subscriber: new KafkaSubscriber({
        brokers: k.brokers,
        groupId: k.group("conflictapp"),
        chunkSize: 10,
        nackDelayMs: 50,
      }),
      middleware: defaultStack({
        dlqPublisher: k.kafka.publisher,
        dlqTopic: dlq!,
        retry: { maxRetries: 0 },
        dedup: { repository: new RedisRepository(k.redis), service, registry: appRegistry(), logger: () => undefined },
      }),
      handler: async (msg) => void ran.push(payloadText(msg)),
    });
    const counter = METRIC_NAMES.payloadConflicts;
    // The zero series exists from registration, on the endpoint and (once scraped) in Prometheus:
    // the conflict is an increase from 0, which is what the rule's increase() sees.
    expect(sample(await (await fetch(appUrl)).text(), counter, bytes)).toBe(0);
    await until(
      async () =>
        (await promQuery(prom!.url, `${counter}{service="${service}",handler="${handler}"}`)).length ===
        PAYLOAD_DIFFERENCES.length,
      20_000,
      "Prometheus to scrape the zero series",
    );
    void router.run();
    try {
      await router.running;
      const brokers = k.brokers.join(",");
      await kcatProduce(brokers, topic!, 0, '{"amount":10}', { [WATERMILL_UUID_HEADER]: uuid });
      await kcatProduce(brokers, topic!, 0, '{"amount":99}', { [WATERMILL_UUID_HEADER]: uuid });
      await until(
        async () => sample(await (await fetch(appUrl)).text(), counter, bytes) === 1,
        30_000,
        "the conflict counter on /api/metrics",
      );
      await until(async () => (await k.kafka.readAll(dlq!)).length === 1, 15_000, "the DLQ copy");
      const [copy] = await k.kafka.readAll(dlq!);
      expect(copy?.ok && copy.uuid).toBe(uuid);
      expect(copy?.ok && copy.payload.toString()).toBe('{"amount":99}');
      expect(copy?.metadata[REASON_POISONED_KEY]).toMatch(/^payload conflict on /);
      expect(copy?.metadata[REASON_CLASS_POISONED_KEY]).toBe(POISON_REASON_CLASS.payloadConflict);
      expect(copy?.metadata[TOPIC_POISONED_KEY]).toBe(topic);
      expect(ran).toEqual(['{"amount":10}']);
      // Scraped within a second, evaluated within a second, `for: 0m`: firing in a few seconds.
      await until(() => firing("DedupPayloadConflict", labels), 30_000, "DedupPayloadConflict to fire");
    } finally {
      await router.close();
    }
  }, 120_000);
});
