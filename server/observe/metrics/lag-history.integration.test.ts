/**
 * The handler page's lag chart (`GET /api/series?metric=consumer_lag`, read from Prometheus) against
 * Kafka's admin API at the same moment: a `<service>.<handler>` group with commits on two of three
 * partitions, one of them passed by retention (records deleted, as retention does), and one
 * partition never committed. The chart's last point is high − max(committed, log start) summed
 * over the partitions — no phantom lag for the stale commit — and it follows new records. Own
 * Prometheus scraping the app's lag gauges every second; the stack's Kafka.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Kafka, logLevel, type Admin, type Producer } from "kafkajs";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { createTopicsReady } from "@/server/transport/topics";
import { ConsumerGroupDescriber } from "../kafka/consumer-group";
import { createObserveContext } from "../context";
import { LagMetrics } from "../watchers/lag-metrics";
import { getSeries } from "../routes/series";
import { PrometheusSource } from "./prometheus";
import { handlerGroupId } from "@/names/kafka";

const tag = randomBytes(4).toString("hex");
const service = `laghist${tag}`;
const handler = "on-review-created";
const topic = `lag-history-${tag}`;
const group = handlerGroupId(service, handler);
let admin: Admin;
let producer: Producer;
let server: Server;
let prom: OwnPrometheus;

/** The group's lag as `kafka-consumer-groups.sh --describe` figures it, with the log-start clamp, from the admin API now. */
async function adminLag(): Promise<number> {
  const ends = await admin.fetchTopicOffsets(topic);
  const committed = (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions;
  return ends.reduce((sum, e) => {
    const c = Number(committed.find((p) => p.partition === e.partition)?.offset ?? -1);
    return sum + Number(e.high) - Math.max(c, Number(e.low));
  }, 0);
}

/** The chart's last point for the handler, as the page reads it. */
async function chartLag(): Promise<number | null> {
  const ctx = createObserveContext({ metrics: new PrometheusSource(prom.url, { cacheTtlMs: 0 }), redis: null });
  const r = await getSeries(ctx, { metric: "consumer_lag", service, handler, range: "5m", step: 1 });
  if (r.data.status !== "ok") throw new Error(r.data.detail);
  const pts = r.data.series.flatMap((s) => s.points).filter(([, v]) => v !== null);
  return pts.length ? pts.at(-1)![1] : null;
}

async function until(what: string, f: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 30 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

beforeAll(async () => {
  const kafka = new Kafka({ clientId: `lag-history-${tag}`, brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  await createTopicsReady(admin, [{ name: topic, partitions: 3 }]);
  producer = kafka.producer();
  await producer.connect();
  for (const partition of [0, 1, 2])
    await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ partition, value: String(i) })) });
  await admin.setOffsets({
    groupId: group,
    topic,
    partitions: [
      { partition: 0, offset: "3" },
      { partition: 1, offset: "4" },
    ],
  });
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: "8" }] });
  const registry = new Registry();
  const describer = new ConsumerGroupDescriber(admin);
  new LagMetrics(
    registry,
    () => [topic],
    (t) => describer.read({ topic: t, group }),
  );
  server = createServer(
    (_req, res) =>
      void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text)),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${(server.address() as AddressInfo).port}`],
    ruleFiles: [],
    intervalSec: 1,
  });
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await producer?.disconnect();
  await admin?.deleteGroups([group]).catch(() => {});
  await admin?.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin?.disconnect();
});

describe("the handler page's lag history", () => {
  it("equals the admin API's lag at the same moment, with the stale commit clamped to the log start, and follows new records", async () => {
    // 2 (commit 3 behind log start 8: not the phantom 7) + 6 + 10 (never committed).
    expect(await adminLag()).toBe(18);
    await until("the chart showing the lag", async () => (await chartLag()) === (await adminLag()));
    expect(await chartLag()).toBe(18);
    await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ partition: 1, value: `n${i}` })) });
    expect(await adminLag()).toBe(23);
    await until("the chart following the new records", async () => (await chartLag()) === (await adminLag()));
  }, 60_000);
});
