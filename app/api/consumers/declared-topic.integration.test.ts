/**
 * With DEMO=off, `GET /api/consumers` describes the topic a handler of the fleet declares in its
 * `dedup_handler_info` (the declarations ./fleet-info.ts last read), though it is not one of
 * CONSUMER_TOPICS; a topic no one declares stays refused. Real Kafka, a group of its own.
 */
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumersResponseSchema } from "@/lib/api/consumers";
import { parseConfig, type AppConfig } from "@/server/config";
import { infoDeclaration, setupFromInfo } from "@/server/observe/shared/fleet-info";
import { clearDeclaredHandlers, setFleetInfo } from "@/server/observe/core/handler-registry";
import { ownKafka } from "@/server/testing/own-kafka";
import { GET } from "./route";

const own = ownKafka();
const GROUP = own.group("ledger-readers");
let topic = "";
type G = typeof globalThis & {
  __dedupHealthConfig?: AppConfig;
  __dedupHealthConsumers?: { admin: { disconnect(): Promise<void> } };
};
const g = globalThis as G;
const saved = g.__dedupHealthConfig;

beforeAll(async () => {
  ({
    names: [topic = ""],
  } = await own.topics("declared-topic", { "": 2 }));
  g.__dedupHealthConfig = parseConfig({ KAFKA_BROKERS: own.brokers.join(","), DEMO: "off", CONSUMER_DETAILS: "all" });
  // A group that consumed 3 records and committed them, then left.
  const kafka = new Kafka({ clientId: "declared-topic-test", brokers: [...own.brokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [0, 1, 2, 3, 4].map((i) => ({ key: `k${i}`, value: `${i}`, partition: 0 })) });
  await producer.disconnect();
  await admin.setOffsets({ groupId: GROUP, topic, partitions: [{ partition: 0, offset: "3" }] });
  await admin.disconnect();
}, 60_000);

afterAll(async () => {
  await g.__dedupHealthConsumers?.admin.disconnect().catch(() => undefined);
  delete g.__dedupHealthConsumers;
  g.__dedupHealthConfig = saved;
  clearDeclaredHandlers();
});

describe("GET /api/consumers with DEMO=off", () => {
  it("describes a topic a handler declares in dedup_handler_info, and refuses one no one declares", async () => {
    const refused = await GET(new Request(`http://localhost/api/consumers?topic=${topic}`));
    expect(refused.status).toBe(404);

    const info = infoDeclaration({ topic, group: GROUP, ttl_ms: "86400000", marking: "lease", lease_ms: "30000" });
    setFleetInfo([
      { service: "ledger", topic, groupId: GROUP, setup: setupFromInfo("post", info), source: "info", info },
    ]);
    const res = await GET(new Request(`http://localhost/api/consumers?topic=${topic}&group=${GROUP}`));
    expect(res.status).toBe(200);
    const body = consumersResponseSchema.parse(await res.json());
    expect(body.groups.map((x) => [x.groupId, x.totalLag])).toEqual([[GROUP, 2]]);
  }, 30_000);
});
