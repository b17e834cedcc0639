/**
 * `DedupDlqBacklogStale` in a real Prometheus: the generated rule file loaded by a Prometheus of the
 * test's own, scraping the dashboard's gauges (`registerDlqBacklogGauge`) over a DLQ topic on the
 * shared Kafka that holds a record poisoned 25 hours ago. The alert goes pending (it fires 10 min
 * later: the promtool cases cover the hold) and leaves once the record is discarded. Needs Kafka,
 * PostgreSQL and /usr/bin/prometheus.
 */
import { createServer, type Server } from "node:http";
import { resolve } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { Registry } from "prom-client";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERTS } from "@/lib/thresholds";
import {
  HANDLER_POISONED_KEY,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
  TOPIC_POISONED_KEY,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { TEST_DATABASE_URL } from "@/server/testing/buggy-consumer";
import { freePort } from "@/server/testing/net";
import { ownKafka } from "@/server/testing/own-kafka";
import { promAlerts, promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { clearDlqBacklog, registerDlqBacklogGauge } from "./dlq-backlog";
import { recordResolutions } from "../records/dlq-resolutions";
import { PostgresDlqStateStore, setDlqStateStore } from "../records/dlq-state";
import { setRecordReader } from "../records/records";

const own = ownKafka();
configOfFile();
const stateTable = `dlq_state_alert_${ulid().slice(-8).toLowerCase()}`;
const DAY_S = 24 * 3600;
let topic: string;
let dlq: string;
let prom: OwnPrometheus | null = null;
let server: Server | null = null;

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

beforeAll(async () => {
  [topic, dlq] = (await own.topics("dlq-stale", { "": 1, ".dlq": 1 })).names as [string, string];
  useConfig({ KAFKA_BROKERS: own.brokers.join(","), CONSUMER_TOPICS: topic });
  await setDlqStateStore(new PostgresDlqStateStore(TEST_DATABASE_URL, stateTable));
  clearDlqBacklog();
  // A record PoisonQueue wrote 25 hours ago (its CreateTime), nobody re-drove or discarded since.
  const producer = new Kafka({ brokers: [...own.brokers], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  const headers = {
    [WATERMILL_UUID_HEADER]: ulid(),
    [HANDLER_POISONED_KEY]: "on-order-paid",
    [TOPIC_POISONED_KEY]: topic,
    [REASON_CLASS_POISONED_KEY]: "handler_error",
    [REASON_POISONED_KEY]: "boom",
    [SUBSCRIBER_POISONED_KEY]: "kafka",
  };
  await producer.send({
    topic: dlq,
    messages: [{ value: "{}", headers, timestamp: String(Date.now() - 25 * 3600_000) }],
  });
  await producer.disconnect();

  const registry = new Registry();
  registerDlqBacklogGauge(registry);
  const port = await freePort();
  server = createServer(
    (_req, res) =>
      void registry.metrics().then((text) => res.writeHead(200, { "Content-Type": registry.contentType }).end(text)),
  );
  await new Promise<void>((r) => server!.listen(port, "127.0.0.1", () => r()));
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${port}`],
    ruleFiles: [resolve("infra/prometheus/rules/dedup.yml")],
    intervalSec: 1,
  });
}, 90_000);

afterAll(async () => {
  await prom?.stop();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  clearDlqBacklog();
  await new PostgresDlqStateStore(TEST_DATABASE_URL, stateTable).drop().catch(() => undefined);
  await setDlqStateStore(null);
  await setRecordReader(null);
});

describe("DedupDlqBacklogStale in a real Prometheus", () => {
  it("goes pending on an open record poisoned 25 h ago and leaves once it is discarded", async () => {
    const mine = async () =>
      (await promAlerts(prom!.url)).find(
        (a) => a.labels.alertname === ALERTS.dlqBacklogStale.name && a.labels.topic === topic,
      );
    const pending = await until("the alert on the 25 h old record", mine, 30_000);
    expect(pending).toMatchObject({ state: "pending", labels: { severity: "ticket" } });
    const [age] = await promQuery(prom!.url, `${ALERTS.dlqBacklogStale.valueExpr}`).then((s) =>
      s.filter((x) => x.metric.topic === topic),
    );
    expect(age!.value).toBeGreaterThan(DAY_S);
    expect(age!.value).toBeLessThan(DAY_S + 2 * 3600);

    await recordResolutions(dlq, [{ partition: 0, offset: "0", state: "discarded", who: "local", why: "superseded" }]);
    // The gauge reads 0 at the next scrape; the rule's 1-minute max_over_time lets it go a minute later.
    await until(
      "the gauge at 0",
      async () =>
        (await promQuery(prom!.url, `dedup_dlq_oldest_open_age_seconds{topic="${topic}"}`))[0]?.value === 0
          ? true
          : undefined,
      20_000,
    );
    await until("the alert to leave", async () => ((await mine()) ? undefined : true), 90_000);
  }, 180_000);
});
