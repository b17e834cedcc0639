/**
 * A lost dedup memory against real processes: an own `redis-server` (no persistence) holding one
 * handler's keys, an own Prometheus (1 s scrape and evaluation) loading the generated rule file and
 * scraping a registry with the dashboard's memory gauge. Redis stopped: the key tile keeps the last
 * count and says since when it is stale. Redis started again, empty, on the same port:
 * `DedupMemoryLost` fires for that handler and the overview names the restart.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { resolve } from "node:path";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { seedKeys } from "@/server/testing/seed-keys";
import { freePort } from "@/server/testing/net";
import { staleSinceText, memoryLostText } from "@/lib/on-call-text";
import { createObserveContext, type ObserveContext } from "../context";
import { memoryWatchOf, registerMemoryLostGauge } from "./memory-watch";
import { PrometheusSource } from "../metrics/prometheus";
import { getOverview } from "../routes/overview";
import { createObserveRedis, type RedisLike } from "../redis/client";

const RULES = resolve(__dirname, "../../../infra/prometheus/rules/dedup.yml");
const SERVICE = `memlost-${randomBytes(4).toString("hex")}`;
const HANDLER = "on-order-paid";
const KEYS = 400;

let redis: OwnRedis;
let prom: OwnPrometheus | undefined;
let app: Server | undefined;
let client: RedisLike;
let ctx: ObserveContext;

/** Polls `f` every 500 ms until it returns a value (not undefined), within `ms`. */
async function until<T>(what: string, ms: number, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const row = async () =>
  (await getOverview(ctx, "1h")).handlers.find((h) => h.service === SERVICE && h.handler === HANDLER);

beforeAll(async () => {
  redis = await startOwnRedis();
  const seed = new Redis(redis.url);
  await seedKeys(seed, [
    { prefix: `${SERVICE}:dedup:${HANDLER}`, count: KEYS, ttlMs: 86_400_000, value: "done:demo.events:0:1" },
  ]);
  seed.disconnect();
  client = createObserveRedis({ url: redis.url }, { maxReconnectDelayMs: 200 });
  const port = await freePort();
  prom = await startOwnPrometheus({ targets: [`127.0.0.1:${port}`], ruleFiles: [RULES], intervalSec: 1 });
  ctx = createObserveContext({
    metrics: new PrometheusSource(prom.url, { cacheTtlMs: 0 }),
    redis: client,
    prefixes: [`${SERVICE}:dedup:*`],
    inspector: { refreshMinIntervalMs: 1000, staleAfterMs: 2000 },
    answerTtlMs: 0,
  });
  const registry = new Registry();
  registerMemoryLostGauge(registry, memoryWatchOf(client, ctx.inspector)!);
  app = createServer((_req, res) => {
    void registry.metrics().then((body) => {
      res.writeHead(200, { "content-type": registry.contentType });
      res.end(body);
    });
  });
  await new Promise<void>((r) => app!.listen(port, "127.0.0.1", r));
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  await new Promise((r) => app?.close(r));
  client?.disconnect();
  // Redis is our own and without persistence: stopping it removes every key the test wrote.
  await redis?.stop();
});

describe("a Redis restarted empty pages DedupMemoryLost, and a stopped Redis reads stale", () => {
  it("counts the keys, then keeps the last count 'stale since' the stop, then names the restart and fires the alert", async () => {
    const counted = await until("the first count of the seeded keys", 30_000, async () => {
      const r = await row();
      return r?.keys.status === "ok" && r.keys.count === KEYS ? r : undefined;
    });
    expect(counted.keys.status === "ok" && counted.keys.staleSince).toBeNull();
    expect(counted.memoryLost).toBeNull();

    await redis.stop();
    const stopped = Date.now();
    const stale = await until("the key tile to turn stale", 30_000, async () => {
      const r = await row();
      return r?.keys.status === "ok" && r.keys.staleSince ? r : undefined;
    });
    // The last count is kept, with since when it cannot be refreshed.
    expect(stale.keys).toMatchObject({ status: "ok", count: KEYS });
    const since = stale.keys.status === "ok" ? Date.parse(stale.keys.staleSince!) : NaN;
    expect(since).toBeGreaterThanOrEqual(stopped - 1000);
    expect(staleSinceText(stale.keys.status === "ok" ? stale.keys.staleSince : null)).toMatch(/^stale since /);

    redis = await startOwnRedis({ port: redis.port });
    const lost = await until("the loss on the overview", 60_000, async () => {
      const r = await row();
      return r?.memoryLost ? r : undefined;
    });
    expect(lost.memoryLost).toMatchObject({ before: KEYS, now: 0, share: 1, cause: "restart" });
    expect(lost.keys.status === "ok" && lost.keys.staleSince).toBeNull();
    expect(memoryLostText(lost.memoryLost)).toMatch(
      /400 keys gone \(100(\.0)?%\) — Redis restarted; duplicates within the window will run again$/,
    );

    const firing = await until("DedupMemoryLost firing in Prometheus", 60_000, async () => {
      const r = await row();
      const a = r?.alerts.find((x) => x.alert === "DedupMemoryLost" && x.state === "firing");
      return a ?? undefined;
    });
    expect(firing.labels).toMatchObject({ service: SERVICE, handler: HANDLER });
  }, 200_000);
});
