/**
 * Hot UUIDs end to end on the shared Kafka and Redis: the demo's consumer on a random topic and
 * service swallows a 500-copy storm of one UUID among 300 other repeated UUIDs (more than the
 * sketch's 20 counters), and `GET /api/hot-keys` — what the handler page reads — lists the storm's
 * UUID first, with its count, cause and a position on the test's topic.
 */
import { ulid } from "ulid";
import { expect, it } from "vitest";
import { GET as hotKeysGET } from "./route";
import { hotKeysResponseSchema } from "@/lib/api/hot-keys";
import { WATERMILL_UUID_HEADER } from "@/names/dedup";
import { dedupMetrics } from "@/server/dedup";
import { startDemoOnKafka } from "@/server/testing/demo-on-kafka";

const HANDLER = "on-review-created";
const own = startDemoOnKafka("hotkeys");
const { service, topic, registry, redis } = own;

const deduplicated = async () =>
  (await dedupMetrics(registry).deduplicated.get()).values.find((v) => v.labels.handler === HANDLER)?.value ?? 0;

it("a 500-copy storm of one UUID is at the top of the handler's hot list, among 300 other repeated UUIDs", async () => {
  const record = (uuid: string, n: number) => ({
    value: JSON.stringify({ reviewId: n }),
    headers: { [WATERMILL_UUID_HEADER]: uuid, "Event-Type": "review.created" },
  });
  const storm = ulid();
  const others = Array.from({ length: 300 }, () => ulid());
  // Firsts: every UUID processed once, then the copies interleaved (each other UUID once more).
  await own.producer.send({ topic, messages: [record(storm, 0), ...others.map((u, i) => record(u, i + 1))] });
  const copies: Array<ReturnType<typeof record>> = [];
  for (let i = 0; i < 500; i++) {
    copies.push(record(storm, 0));
    if (i < others.length) copies.push(record(others[i]!, i + 1));
  }
  for (let i = 0; i < copies.length; i += 200) await own.producer.send({ topic, messages: copies.slice(i, i + 200) });
  const deadline = Date.now() + 90_000;
  while ((await deduplicated()) < 800) {
    if (Date.now() > deadline) throw new Error(`only ${await deduplicated()} of 800 copies swallowed in 90 s`);
    await new Promise((r) => setTimeout(r, 200));
  }

  const res = await hotKeysGET(
    new Request(`http://localhost/api/hot-keys?${new URLSearchParams({ service, handler: HANDLER })}`),
  );
  expect(res.status).toBe(200);
  const body = hotKeysResponseSchema.parse(await res.json());
  expect(body.total).toBe(800);
  expect(body.keys.length).toBeLessThanOrEqual(body.capacity);
  const top = body.keys[0]!;
  expect(top.uuid).toBe(storm);
  expect(top.key).toBe(`${service}:dedup:${HANDLER}:${storm}`);
  expect(top.count).toBeGreaterThanOrEqual(500);
  expect(top.count - top.error).toBeLessThanOrEqual(500);
  // The producer re-sent it: every copy sits at a new offset of the test's topic.
  expect(top.byCause.republish).toBe(top.count - top.error);
  expect(top.lastPosition).toMatch(new RegExp(`^${topic.replace(/\./g, "\\.")}:\\d+:\\d+$`));
  // The key it links to is the processed one in Redis.
  expect(await redis.get(top.key)).toMatch(/^done:/);
  // Every other listed UUID was swallowed once; none comes near the storm.
  for (const k of body.keys.slice(1)) expect(k.count - k.error).toBeLessThanOrEqual(1);
}, 120_000);
