/**
 * Two dashboard replicas (`next start` twice) on one PostgreSQL database of the test's own, both
 * scraped every second by a Prometheus of the test's own with the project's rules: the scrape-time
 * gauges (the lag family of a topic of the test's own, the memory lost ratio of a redis-server of
 * its own) are exported by exactly one replica, so `sum` over the fleet is one replica's figure; a
 * rebalance observed by the leader and an action done through the follower show on the other's
 * chart events; Redis restarted empty fires DedupMemoryLost, and after the leader is SIGKILLed the
 * other replica exports the gauges within 30 s — the held loss included, from the saved baseline.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { join } from "node:path";
import { Redis } from "ioredis";
import { Kafka, logLevel, type Consumer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_LEADER_METRIC } from "@/names/replicas";
import { createOwnDatabase, type OwnDatabase } from "@/server/testing/own-database";
import { promQuery, startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { seedKeys } from "@/server/testing/seed-keys";
import { REAL_ENV, ROOT, startApp, until, type App } from "./harness";
import { startOwnAlertmanager, type OwnAlertmanager } from "@/server/testing/own-alertmanager";

const tag = randomBytes(3).toString("hex");
const TOPIC = `he-${tag}.events`;
// `<service>.<handler>`: the dashboard puts the group's rebalances on that handler's charts.
const SERVICE = `he-${tag}`;
const GROUP = `${SERVICE}.on-event`;
const RECORDS = 7;
const HANDLER = "on-event";
const KEYS = 400;
/** The stack's Alertmanager: a silence of the test's own service, expired by the test. */
/** The test's own Alertmanager (CI's stack runs none on 9093). */
let ALERTMANAGER = "";

const kafka = new Kafka({ clientId: `he-${tag}`, brokers: [REAL_ENV.KAFKA_BROKERS], logLevel: logLevel.NOTHING });
const up: {
  db?: OwnDatabase;
  prom?: OwnPrometheus;
  apps: App[];
  consumer?: Consumer;
  silence?: string;
  redis?: OwnRedis;
  am?: OwnAlertmanager;
} = { apps: [] };

/** A free port in `lo..hi` (this test's ranges), tried at random. */
async function portIn(lo: number, hi: number, taken: readonly number[] = []): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = lo + Math.floor(Math.random() * (hi - lo + 1));
    if (taken.includes(p)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(false));
      s.listen(p, "127.0.0.1", () => s.close(() => resolve(true)));
    });
    if (free) return p;
  }
  throw new Error(`no free port in ${lo}..${hi}`);
}

/** The values of `metric` in one replica's /api/metrics about the test's topic or service (the leader gauge: unfiltered). */
async function scrape(app: App, metric: string): Promise<number[]> {
  const text = await (await fetch(`${app.url}/api/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${metric}{`) || l.startsWith(`${metric} `))
    .filter(
      (l) => metric === DASHBOARD_LEADER_METRIC || l.includes(`topic="${TOPIC}"`) || l.includes(`service="${SERVICE}"`),
    )
    .map((l) => Number(l.slice(l.lastIndexOf(" ") + 1)));
}

const MEMORY_LOST = "dedup_memory_lost_ratio";

const offsetsQuery = `kafka_topic_partition_current_offset{topic="${TOPIC}"}`;

beforeAll(async () => {
  up.db = await createOwnDatabase("he_");
  up.am = await startOwnAlertmanager();
  ALERTMANAGER = up.am.url;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: TOPIC,
    messages: Array.from({ length: RECORDS }, (_, i) => ({ value: `he ${i}`, partition: i % 3 })),
  });
  await producer.disconnect();
  // A member of the handler's group: it leaves later, a rebalance the leader observes.
  up.consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000 });
  await up.consumer.connect();
  await up.consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await up.consumer.run({ eachMessage: async () => undefined });

  // The handler's dedup keys in a Redis of the test's own (no persistence: a restart empties it).
  up.redis = await startOwnRedis({ port: await portIn(19800, 19899) });
  const seed = new Redis(up.redis.url);
  await seedKeys(seed, [
    { prefix: `${SERVICE}:dedup:${HANDLER}`, count: KEYS, ttlMs: 86_400_000, value: "done:x:0:1" },
  ]);
  seed.disconnect();

  const promPort = await portIn(19800, 19899, [up.redis.port]);
  const a = await portIn(3800, 3899);
  const b = await portIn(3800, 3899, [a]);
  const env = {
    KAFKA_BROKERS: REAL_ENV.KAFKA_BROKERS,
    REDIS_URL: up.redis.url,
    DEDUP_PREFIXES: `${SERVICE}:dedup:*`,
    DATABASE_URL: up.db.url,
    PROMETHEUS_URL: `http://127.0.0.1:${promPort}`,
    ALERTMANAGER_URL: ALERTMANAGER,
    DEMO: "off",
    CONSUMER_TOPICS: TOPIC,
  };
  // One after the other: the first to start takes the lock.
  up.apps.push(await startApp({ port: a, env }));
  up.apps.push(await startApp({ port: b, env }));
  up.prom = await startOwnPrometheus({
    port: promPort,
    targets: up.apps.map((x) => new URL(x.url).host),
    metricsPath: "/api/metrics",
    ruleFiles: [join(ROOT, "infra/prometheus/rules/dedup.yml")],
    intervalSec: 1,
  });
}, 90_000);

afterAll(async () => {
  if (up.silence)
    await fetch(`${ALERTMANAGER}/api/v2/silence/${up.silence}`, { method: "DELETE" }).catch(() => undefined);
  await up.consumer?.disconnect().catch(() => undefined);
  for (const a of up.apps) await a.stop();
  await up.prom?.stop();
  await up.redis?.stop();
  await up.db?.drop();
  await up.am?.stop();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteGroups([GROUP]).catch(() => undefined);
  await admin.deleteTopics({ topics: [TOPIC] }).catch(() => undefined);
  await admin.disconnect();
});

describe("several dashboard replicas on one PostgreSQL", () => {
  it("exactly one replica exports the scrape-time gauges: the fleet's sum is one replica's figure", async () => {
    const [first, second] = up.apps as [App, App];
    expect(await scrape(first, DASHBOARD_LEADER_METRIC)).toEqual([1]);
    expect(await scrape(second, DASHBOARD_LEADER_METRIC)).toEqual([0]);
    // The leader's own exposition: one series per partition, the records produced in all.
    const own = await until("the leader's topic offsets", 20_000, async () => {
      const v = await scrape(first, "kafka_topic_partition_current_offset");
      return v.length === 3 ? v : undefined;
    });
    expect(own.reduce((x, y) => x + y, 0)).toBe(RECORDS);
    expect(await scrape(second, "kafka_topic_partition_current_offset")).toEqual([]);
    // The handler's keys counted by the leader: its memory gauge at 0, none on the follower.
    await until("the leader's memory gauge of the handler", 30_000, async () =>
      (await scrape(first, MEMORY_LOST)).length === 1 ? true : undefined,
    );
    expect(await scrape(first, MEMORY_LOST)).toEqual([0]);
    expect(await scrape(second, MEMORY_LOST)).toEqual([]);
    // Prometheus scrapes both: one instance carries the series, the sum is the produced count once.
    const byInstance = await until("both replicas scraped by Prometheus", 20_000, async () => {
      const leaders = await promQuery(up.prom!.url, `${DASHBOARD_LEADER_METRIC}`);
      const offsets = await promQuery(up.prom!.url, `sum by (instance) (${offsetsQuery})`);
      return leaders.length === 2 && offsets.length > 0 ? { leaders, offsets } : undefined;
    });
    expect(byInstance.offsets.map((s) => [s.metric.instance, s.value])).toEqual([[new URL(first.url).host, RECORDS]]);
    expect((await promQuery(up.prom!.url, `sum(${DASHBOARD_LEADER_METRIC})`))[0]?.value).toBe(1);
  }, 45_000);

  it("a rebalance the leader observed and an action done through one replica show on the other's events", async () => {
    const [first, second] = up.apps as [App, App];
    // The group's member leaves: the leader's next read sees its members change.
    await up.consumer!.disconnect();
    const titles = async (app: App) => {
      const r = (await (await fetch(`${app.url}/api/events?range=15m&service=${SERVICE}`)).json()) as {
        events: Array<{ kind: string; title: string }>;
      };
      return r.events.map((e) => `${e.kind}: ${e.title}`);
    };
    const seen = await until("the rebalance on the follower's events", 20_000, async () => {
      const t = await titles(second);
      return t.some((x) => x.startsWith(`rebalance: Rebalance of ${GROUP}`)) ? t : undefined;
    });
    expect(seen.filter((x) => x.startsWith("rebalance:"))).toEqual([`rebalance: Rebalance of ${GROUP}: 1 → 0 members`]);
    // The same marker, once, on the leader's own answer (recorded by the leader only, read from the database by both).
    expect((await titles(first)).filter((x) => x.startsWith("rebalance:"))).toEqual(
      seen.filter((x) => x.startsWith("rebalance:")),
    );

    // An action done through the follower (a silence, audited) is a marker on the leader's chart.
    const res = await fetch(`${second.url}/api/silences`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        alertname: "DedupDuplicateRateHigh",
        service: SERVICE,
        durationMinutes: 5,
        comment: "he replicas e2e",
      }),
    });
    expect(res.status).toBe(201);
    up.silence = ((await res.json()) as { silence: { id: string } }).silence.id;
    const onLeader = (await titles(first)).filter((x) => x.startsWith("silence:"));
    expect(onLeader).toEqual([
      expect.stringMatching(/^silence: Silence created for DedupDuplicateRateHigh: he replicas e2e/),
    ]);
  }, 30_000);

  it("Redis restarted empty fires DedupMemoryLost in Prometheus, from the leader's gauge", async () => {
    const [first] = up.apps as [App, App];
    const port = up.redis!.port;
    await up.redis!.stop();
    up.redis = await startOwnRedis({ port });
    await until("the leader's held loss", 40_000, async () =>
      (await scrape(first, MEMORY_LOST))[0] === 1 ? true : undefined,
    );
    const firing = await until("DedupMemoryLost firing in Prometheus", 10_000, async () => {
      const s = await promQuery(
        up.prom!.url,
        `ALERTS{alertname="DedupMemoryLost", service="${SERVICE}", alertstate="firing"}`,
      );
      return s.length > 0 ? s : undefined;
    });
    expect(firing.map((x) => x.metric.handler)).toEqual([HANDLER]);
    // The follower's overview shows the same loss: read from the state the leader saved, not counted by itself.
    const [, second] = up.apps as [App, App];
    const row = await until("the loss on the follower's overview", 10_000, async () => {
      const o = (await (await fetch(`${second.url}/api/overview?range=15m`)).json()) as {
        handlers: Array<{ service: string; handler: string; memoryLost: unknown }>;
      };
      return o.handlers.find((h) => h.service === SERVICE && h.handler === HANDLER && h.memoryLost);
    });
    expect(row.memoryLost).toMatchObject({ before: KEYS, now: 0, share: 1, cause: "restart" });
  }, 60_000);

  it("after the leader is SIGKILLed the other replica exports the gauges within 30 s, the held loss included", async () => {
    const [first, second] = up.apps as [App, App];
    process.kill(-first.pid, "SIGKILL");
    up.apps = up.apps.filter((a) => a !== first);
    const t0 = Date.now();
    const own = await until("the second replica's topic offsets", 30_000, async () => {
      const v = await scrape(second, "kafka_topic_partition_current_offset");
      return v.length === 3 ? v : undefined;
    });
    const tookMs = Date.now() - t0;
    expect(own.reduce((x, y) => x + y, 0)).toBe(RECORDS);
    expect(await scrape(second, DASHBOARD_LEADER_METRIC)).toEqual([1]);
    // It goes on from the saved baseline: the loss stays held (a fresh count of the empty Redis would say 0).
    await until("the new leader's memory gauge", 10_000, async () =>
      (await scrape(second, MEMORY_LOST)).length === 1 ? true : undefined,
    );
    expect(await scrape(second, MEMORY_LOST)).toEqual([1]);
    // And in Prometheus: the series now come from the second replica.
    await until("Prometheus reading the offsets and the held loss from the new leader", 10_000, async () => {
      const s = await promQuery(up.prom!.url, `sum by (instance) (${offsetsQuery})`);
      const lost = await promQuery(
        up.prom!.url,
        `${MEMORY_LOST}{service="${SERVICE}", instance="${new URL(second.url).host}"}`,
      );
      return s.length === 1 &&
        s[0]!.metric.instance === new URL(second.url).host &&
        s[0]!.value === RECORDS &&
        lost[0]?.value === 1
        ? s
        : undefined;
    });
    expect(tookMs).toBeLessThan(30_000);
    console.log(`[replicas e2e] the follower exported the gauges ${tookMs} ms after the leader was killed`);
  }, 45_000);
});
