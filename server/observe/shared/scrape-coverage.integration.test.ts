/**
 * The Overview's scrape-coverage banner on the real stack: two demo replicas (as two processes
 * would run them: each its own registry) join the same three consumer groups on real Kafka, and a
 * Prometheus of the test's own scrapes only the first one's /metrics. The comparison must name the
 * second replica as unscraped and put the scraped share at half the partitions; once the second
 * replica's endpoint answers too, the banner goes. Needs `npm run stack:up` (Kafka) and
 * /usr/bin/prometheus.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryRepository } from "@/server/dedup";
import { DemoService } from "@/server/demo/demo";
import { DEMO_HANDLER_SPECS, demoGroupIds } from "@/server/notification/demo-handlers";
import { MemorySideEffectStore } from "@/server/notification/side-effects";
import { KafkaTransport } from "@/server/transport";
import { ConsumerGroupDescriber } from "../kafka/consumer-group";
import type { DeclaredHandler } from "../core/handler-registry";
import { PrometheusSource } from "../metrics/prometheus";
import { buildScrapeCoverage, type ScrapeCoverageField } from "./scrape-coverage";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { freePort } from "@/server/testing/net";

const BROKERS = (process.env.KAFKA_BROKERS || "127.0.0.1:9092").split(",");
const tag = randomBytes(4).toString("hex");
const service = `cov-${tag}`;
const topic = `cov-${tag}`;
const replicas = [`host-a-${tag}`, `host-b-${tag}`];

let admin: Admin;
let prom: OwnPrometheus | null = null;
const servers: Server[] = [];
const demos: DemoService[] = [];
const transports: KafkaTransport[] = [];
const ports: number[] = [];
const registries = replicas.map(() => new Registry());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function serve(registry: Registry, port: number): Promise<Server> {
  const s = createServer((_req, res) => {
    void registry.metrics().then((text) => res.writeHead(200, { "Content-Type": registry.contentType }).end(text));
  });
  return new Promise((resolve) => s.listen(port, "127.0.0.1", () => resolve(s)));
}

beforeAll(async () => {
  admin = new Kafka({
    clientId: "cov-test",
    brokers: BROKERS,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    retry: { retries: 1 },
  }).admin();
  await admin.connect();
  for (const _ of replicas) ports.push(await freePort());
  servers.push(await serve(registries[0]!, ports[0]!)); // the second replica's endpoint is down at first
  prom = await startOwnPrometheus({ targets: ports.map((p) => `127.0.0.1:${p}`), ruleFiles: [], intervalSec: 1 });
  for (const [i, name] of replicas.entries()) {
    const transport = new KafkaTransport(BROKERS);
    transports.push(transport);
    const demo = new DemoService({
      transport,
      repository: new MemoryRepository(),
      store: new MemorySideEffectStore(),
      service,
      registry: registries[i],
      ratePerSec: 0,
      topic,
      dlqTopic: `${topic}.dlq`,
      replicaName: name,
    });
    demos.push(demo);
    await demo.start();
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(demos.map((d) => d.stop()));
  await Promise.allSettled(transports.map((t) => t.close()));
  await prom?.stop();
  for (const s of servers) s.close();
  await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
  await admin.deleteGroups(demoGroupIds(service)).catch(() => undefined);
  await admin.disconnect().catch(() => undefined);
}, 60_000);

describe("scrape coverage (real Kafka, own Prometheus)", () => {
  const declared = DEMO_HANDLER_SPECS.map((h) => ({
    service,
    topic,
    setup: { handler: h.name },
  })) as unknown as DeclaredHandler[];

  async function coverageUntil(ok: (f: ScrapeCoverageField) => boolean, ms: number): Promise<ScrapeCoverageField> {
    const describer = new ConsumerGroupDescriber(admin);
    const metrics = new PrometheusSource(prom!.url, { cacheTtlMs: 0 });
    const end = Date.now() + ms;
    let f: ScrapeCoverageField = null;
    for (;;) {
      f = await buildScrapeCoverage(metrics, declared, (gs) => describer.members(gs));
      if (ok(f) || Date.now() > end) return f;
      await sleep(500);
    }
  }

  it("one of two replicas scraped: the second is named unscraped, the figures cover half the partitions; both scraped: no banner", async () => {
    const stable = (f: ScrapeCoverageField) =>
      f?.status === "ok" &&
      f.services[0]!.memberReplicas.length === 2 &&
      f.services[0]!.scrapedReplicas.length >= 1 &&
      f.services[0]!.scrapedShare !== null;
    const half = await coverageUntil(
      (f) => stable(f) && f?.status === "ok" && f.services[0]!.scrapedShare === 0.5,
      30_000,
    );
    expect(half).toMatchObject({
      status: "ok",
      services: [
        {
          service,
          instances: 1,
          scrapedReplicas: [replicas[0]],
          memberReplicas: [...replicas].sort(),
          unscraped: [replicas[1]],
          scrapedShare: 0.5,
          mismatch: true,
        },
      ],
    });
    expect(half?.status === "ok" && half.services[0]!.message).toBe(
      `Prometheus scrapes 1 instance of ${service}, the consumer groups have 2 members: ${replicas[1]} is not scraped, so the figures show about half of the traffic.`,
    );

    servers.push(await serve(registries[1]!, ports[1]!));
    const whole = await coverageUntil((f) => f?.status === "ok" && !f.services[0]!.mismatch, 20_000);
    expect(whole).toMatchObject({
      status: "ok",
      services: [
        {
          instances: 2,
          scrapedReplicas: [...replicas].sort(),
          unscraped: [],
          scrapedShare: 1,
          mismatch: false,
          message: null,
        },
      ],
    });
  }, 90_000);
});
