import { afterAll } from "vitest";
import { RedisRepository } from "@/server/dedup";
import { deleteKeysByPrefix } from "@/server/dedup-redis";
import { DEMO_PARTITIONS, demoGroupIds } from "@/server/notification/demo-handlers";
import { ownKafka } from "@/server/testing/own-kafka";
import { demoTogglesSuite } from "./demo-toggles.suite";

/**
 * The toggles on the shared broker 127.0.0.1:9092 and Redis 127.0.0.1:6379: every case its own
 * topic and DLQ and its own SERVICE_NAME (so its own consumer groups and `<service>:dedup:` keys),
 * all removed after the file. Kafka is slower to rebalance than the embedded broker: longer runs.
 */
const own = ownKafka();
const services: string[] = [];

afterAll(async () => {
  await own.kafka.deleteGroups(services.flatMap((s) => demoGroupIds(s))).catch(() => undefined);
  for (const s of services) await deleteKeysByPrefix(own.redis, `${s}:dedup`);
}, 60_000);

/** Keys of `service` still under a `processing` lease. */
async function leasedKeys(service: string): Promise<number> {
  let n = 0;
  let cursor = "0";
  do {
    const [next, keys] = await own.redis.scan(cursor, "MATCH", `${service}:dedup:*`, "COUNT", 1000);
    cursor = next;
    for (const k of keys) if ((await own.redis.get(k))?.startsWith("processing:")) n++;
  } while (cursor !== "0");
  return n;
}

demoTogglesSuite({
  label: "real Kafka and Redis",
  leavingCases: ["rebalance", "rebalanceFaults", "restart", "restartFaults"],
  world: async (name) => {
    const { id, names } = await own.topics(`toggles.${name}`, { "": DEMO_PARTITIONS, ".dlq": 1 });
    const [topic, dlqTopic] = names as [string, string];
    const service = `toggles-${name}-${id}`;
    services.push(service);
    return {
      transport: own.kafka,
      repository: new RedisRepository(own.redis),
      topic,
      dlqTopic,
      service,
      leasedKeys: () => leasedKeys(service),
    };
  },
  rate: 20,
  runMs: 20_000,
  drainMs: 15_000,
  periodMs: 4_000,
  tailMs: 1_000,
  timeoutMs: 90_000,
});
