/**
 * DedupConsumerLagGrowing with the real Prometheus and the real broker: the consumer-group gauges
 * the app exports (LagMetrics over Kafka's admin API, served over HTTP) are scraped by a private
 * Prometheus running the project's generated rule file, with this alert's window cut from 10 min
 * to 15 s and its `for` from 10 min to 5 s (scrape and evaluation every second), so the test waits
 * seconds. A stopped group whose topic keeps receiving messages fires it, labelled with the
 * service and handler taken from the group id; a stopped group with a high lag that does not grow
 * never goes pending. Needs the stack's Kafka (127.0.0.1:9092).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kafka, logLevel, type Admin, type Producer } from "kafkajs";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERTS } from "@/lib/thresholds";
import { LAG_GROWTH_FLOOR, LAG_GROWTH_WINDOW } from "@/lib/alert-exprs";
import { createTopicsReady } from "@/server/transport/topics";
import { ConsumerGroupDescriber } from "../kafka/consumer-group";
import { LagMetrics } from "../watchers/lag-metrics";
import { promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";

const tag = randomBytes(4).toString("hex");
const service = `laggrow${tag}`;
const growingTopic = `lag-growing-${tag}`;
const flatTopic = `lag-flat-${tag}`;
const groups = { [growingTopic]: `${service}.stopped`, [flatTopic]: `${service}.idle` };
const ALERT = ALERTS.consumerLagGrowing;
const BROKERS = ["127.0.0.1:9092"];

let admin: Admin;
let producer: Producer;
let server: Server;
let prom: OwnPrometheus;
let dir: string;

/** The project's rule file with this alert's window and `for` shortened (the other rules as they are). */
function fastRules(): string {
  const rules = readFileSync(join(process.cwd(), "infra/prometheus/rules/dedup.yml"), "utf8");
  const at = rules.indexOf(`alert: ${ALERT.name}`);
  const end = rules.indexOf("- alert:", at + 1);
  const block = rules
    .slice(at, end < 0 ? undefined : end)
    .replace(`[${LAG_GROWTH_WINDOW}]`, "[15s]")
    .replace(`for: ${ALERT.for}`, "for: 5s");
  expect(block).toContain("[15s]");
  expect(block).toContain("for: 5s");
  const file = join(dir, "rules.yml");
  writeFileSync(file, rules.slice(0, at) + block + (end < 0 ? "" : rules.slice(end)));
  return file;
}

/** Prometheus' ALERTS series of this alert for our service: `handler/state` strings. */
async function alertStates(): Promise<string[]> {
  const r = await promQuery(prom.url, `ALERTS{alertname="${ALERT.name}",service="${service}"}`);
  return r.map((s) => `${s.metric.handler}/${s.metric.topic}/${s.metric.alertstate}`).sort();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "lag-growth-"));
  const kafka = new Kafka({ clientId: `lag-growth-${tag}`, brokers: BROKERS, logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  await createTopicsReady(admin, [
    { name: growingTopic, partitions: 1 },
    { name: flatTopic, partitions: 1 },
  ]);
  producer = kafka.producer();
  await producer.connect();
  // The idle group's topic: 3 × the floor waiting, and nothing more arrives.
  await producer.send({
    topic: flatTopic,
    messages: Array.from({ length: 3 * LAG_GROWTH_FLOOR }, (_, i) => ({ value: String(i) })),
  });
  // Both groups committed at 0 and have no member: stopped consumers.
  for (const [topic, groupId] of Object.entries(groups))
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: "0" }] });

  const registry = new Registry();
  const describer = new ConsumerGroupDescriber(admin);
  new LagMetrics(
    registry,
    () => Object.keys(groups),
    (topic) => describer.read({ topic, group: groups[topic]! }),
  );
  server = createServer((_req, res) => {
    void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  prom = await startOwnPrometheus({
    targets: [`127.0.0.1:${(server.address() as AddressInfo).port}`],
    ruleFiles: [fastRules()],
    intervalSec: 1,
  });
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await producer?.disconnect();
  await admin?.deleteGroups(Object.values(groups)).catch(() => {});
  await admin?.deleteTopics({ topics: Object.keys(groups) }).catch(() => {});
  await admin?.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe("DedupConsumerLagGrowing in the real Prometheus", () => {
  it("fires for a stopped group whose topic keeps receiving messages, never for a high lag that stays flat", async () => {
    const seen = new Set<string>();
    let firing = false;
    const deadline = Date.now() + 90_000;
    // 20 messages a second onto the stopped group's topic: past the floor within ~5 s, then growing.
    for (let i = 0; !firing && Date.now() < deadline; i++) {
      await producer.send({
        topic: growingTopic,
        messages: Array.from({ length: 20 }, (_, j) => ({ value: `${i}-${j}` })),
      });
      for (const s of await alertStates()) seen.add(s);
      firing = seen.has(`stopped/${growingTopic}/firing`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect([...seen].sort()).toEqual([`stopped/${growingTopic}/firing`, `stopped/${growingTopic}/pending`]);
    // The idle group's lag is exported (flat, above the floor), so its silence is the rule's doing.
    const flat = await promQuery(prom.url, `kafka_consumergroup_lag_sum{consumergroup="${groups[flatTopic]}"}`);
    expect(flat[0]?.value).toBe(3 * LAG_GROWTH_FLOOR);
  }, 120_000);
});
