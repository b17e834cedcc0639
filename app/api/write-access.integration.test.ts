/**
 * Every write route of the record/DLQ/key-action features under the access rule: from a caller
 * that is not this machine and has no token, each answers 401 (a token is configured) or 403 (none:
 * read-only beyond loopback) and changes nothing — the key is still in Redis with its TTL, the
 * topic has no new record, the audit trail did not move.
 */
import { randomBytes } from "node:crypto";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as redrive } from "@/app/api/dlq/redrive/route";
import { POST as forget } from "@/app/api/keys/forget/route";
import { POST as ttl } from "@/app/api/keys/ttl/route";
import { POST as runScenario } from "@/app/api/workshop/scenarios/[name]/runs/route";
import { auditStore, setAuditStore } from "@/server/audit";
import { MemoryAuditStore } from "@/server/audit/store";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { recordReader } from "@/server/observe/records/records";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { configOfFile, useConfig } from "@/server/testing/app-config";
import { ownKafka } from "@/server/testing/own-kafka";

const own = ownKafka();
configOfFile();
const service = `act-acc-${randomBytes(3).toString("hex")}`;
const key = `${service}:dedup:h:u1`;
own.forget(key);
let topic: string;
let observeRedis: RedisLike;

// A caller on another machine, as Next.js would pass it on (its address forwarded, a public Host).
const REMOTE = { "content-type": "application/json", host: "dash.example.com", "x-forwarded-for": "203.0.113.7" };
const post = (route: (r: Request) => Promise<Response>, body: unknown) =>
  route(new Request("http://dash.example.com/api/x", { method: "POST", headers: REMOTE, body: JSON.stringify(body) }));
const ROUTES: Array<[string, () => Promise<Response>]> = [
  ["POST /api/keys/forget", () => post(forget, { service, handler: "h", uuids: ["u1"], dryRun: false })],
  ["POST /api/keys/ttl", () => post(ttl, { service, handler: "h", uuids: ["u1"], ttlMs: 5000, dryRun: false })],
  ["POST /api/dlq/redrive", () => post(redrive, { filter: {}, dryRun: false })],
  [
    "POST /api/workshop/scenarios/{name}/runs",
    () =>
      runScenario(new Request("http://dash.example.com/api/x", { method: "POST", headers: REMOTE }), {
        params: Promise.resolve({ name: "retry-on-error" }),
      }),
  ],
];

const topicEnd = async () => (await recordReader().ranges(topic)).reduce((a, r) => a + r.high, 0n);

beforeAll(async () => {
  await own.redis.set(key, "done:x:0:1", "PX", 600_000);
  observeRedis = createObserveRedis({ url: "redis://127.0.0.1:6379" });
  setObserveContext(createObserveContext({ metrics: new LocalSource(new Registry()), redis: observeRedis }));
  [topic] = (await own.topics("act-access", { "": 1, ".dlq": 1 })).names as [string];
  await own.kafka.produceRaw(`${topic}.dlq`, {
    headers: { _watermill_message_uuid: "u1", topic_poisoned: topic, reason_poisoned: "boom", handler_poisoned: "h" },
    value: Buffer.from("{}"),
  });
  await setAuditStore(new MemoryAuditStore());
}, 60_000);

afterAll(async () => {
  setObserveContext(null);
  await setAuditStore(null);
  observeRedis.disconnect();
});

describe("write routes without the token from another machine", () => {
  for (const [token, status] of [
    [undefined, 403],
    ["a-workshop-token-of-16+", 401],
  ] as const) {
    it(`answer ${status} ${token ? "(WORKSHOP_TOKEN set, none sent)" : "(no WORKSHOP_TOKEN: read-only)"} and change nothing`, async () => {
      useConfig({
        REDIS_URL: "redis://127.0.0.1:6379",
        KAFKA_BROKERS: own.brokers.join(","),
        CONSUMER_TOPICS: topic,
        ...(token ? { WORKSHOP_TOKEN: token } : {}),
      });
      const pttl = await own.redis.pttl(key);
      const end = await topicEnd();
      for (const [name, call] of ROUTES) {
        const res = await call();
        expect(res.status, name).toBe(status);
        expect((await res.json()) as object, name).toHaveProperty("detail");
      }
      expect(await own.redis.exists(key)).toBe(1);
      expect(Math.abs((await own.redis.pttl(key)) - pttl)).toBeLessThan(5000);
      expect(await topicEnd()).toBe(end);
      expect(await auditStore().list({ limit: 10 })).toEqual([]);
    });
  }
});
