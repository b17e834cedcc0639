/**
 * What a record or key scan of the built app (`next start`, real mode) gives a caller over HTTP when
 * someone feeds it hostile data: a DLQ partition of huge records still pages and is searched by
 * UUID; DLQ records that each name their own handler do not make the metrics endpoint one series
 * per record; anonymous key-browser readers do not starve a token holder's forget. One app on the
 * shared Kafka (its own topics) and its own redis-server.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HANDLER_POISONED_KEY,
  REASON_CLASS_POISONED_KEY,
  REASON_POISONED_KEY,
  TOPIC_POISONED_KEY,
} from "@/names/dedup";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { newMessage } from "@/server/dedup/message";
import { ownKafka } from "@/server/testing/own-kafka";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { startApp, type App } from "./harness";

const own = ownKafka();
const service = `sec-scans-${randomBytes(3).toString("hex")}`;
const token = randomBytes(16).toString("hex");
/** 40 records of 900 kB: 36 MB, above a record scan's 32 MiB bound. */
const HUGE = { count: 40, bytes: 900 * 1024 };
/** DLQ records that each carry a handler header of their own. */
const SPRAYED = 500;
let bigTopic: string;
let bigDlq: string;
let sprayTopic: string;
let sprayDlq: string;
let bigUuids: string[] = [];
let redis: OwnRedis;
let app: App;

/** A DLQ copy as a PoisonQueue writes it, poisoned on `topic` by `handler`. */
const poisoned = (topic: string, handler: string, payload: string) =>
  newMessage(ulid(), payload, {
    metadata: {
      [HANDLER_POISONED_KEY]: handler,
      [TOPIC_POISONED_KEY]: topic,
      [REASON_CLASS_POISONED_KEY]: "handler_error",
      [REASON_POISONED_KEY]: "boom",
    },
  });

beforeAll(async () => {
  [bigTopic, bigDlq] = (await own.topics("sec-scans-big", { "": 1, ".dlq": 1 })).names as [string, string];
  [sprayTopic, sprayDlq] = (await own.topics("sec-scans-spray", { "": 1, ".dlq": 3 })).names as [string, string];
  // One record per send: a batch of them would pass the broker's message.max.bytes. Random bytes,
  // so no compression makes them small.
  for (let i = 0; i < HUGE.count; i++) {
    const m = poisoned(bigTopic, "on-huge", randomBytes(HUGE.bytes * 0.75).toString("base64"));
    bigUuids.push(m.uuid);
    await own.kafka.publisher.publish(bigDlq, m);
  }
  await own.kafka.publisher.publish(
    sprayDlq,
    ...Array.from({ length: SPRAYED }, (_, i) => poisoned(sprayTopic, `spray-${i}`, "{}")),
  );
  redis = await startOwnRedis();
  const r = new Redis(redis.url);
  // 300 done keys to forget, a sparse prefix for the readers, 30,000 other keys every SCAN walks.
  const p = r.pipeline();
  for (let i = 0; i < 300; i++) p.set(`${service}:dedup:starved:${i}`, "done", "PX", 600_000);
  for (let i = 0; i < 5; i++) p.set(`${service}:dedup:sparse:${i}`, "done", "PX", 600_000);
  for (let i = 0; i < 30_000; i++) p.set(`elsewhere:${i}`, "x");
  await p.exec();
  r.disconnect();
  app = await startApp({
    env: {
      KAFKA_BROKERS: own.brokers.join(","),
      CONSUMER_TOPICS: `${bigTopic},${sprayTopic}`,
      REDIS_URL: redis.url,
      SERVICE_NAME: service,
      DEDUP_PREFIXES: `${service}:dedup:*`,
      DEMO: "off",
      WORKSHOP_TOKEN: token,
      // Behind a proxy: each reader below is a client of its own, as on a shared dashboard.
      TRUSTED_PROXIES: "127.0.0.1",
    },
  });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await redis?.stop();
});

const getJson = async <T>(path: string, headers: Record<string, string> = {}) => {
  const r = await fetch(`${app.url}${path}`, { headers });
  expect(r.status, `${path}: ${r.status}`).toBe(200);
  return (await r.json()) as T;
};

describe("a DLQ partition of huge records stays readable", () => {
  it("40 records of 900 kB (36 MB, above the 32 MiB scan bound): the DLQ pages reach every record, the cursor moving each time; the UUID search finds the newest", async () => {
    type Page = { entries: Array<{ uuid: string | null }>; cursor: string | null };
    const seen: string[] = [];
    const cursors: Array<string | null> = [];
    let cursor: string | null = null;
    for (let page = 0; page < 8; page++) {
      const q: string = `/api/dlq?topic=${bigDlq}&state=any&limit=50${cursor ? `&cursor=${cursor}` : ""}`;
      const body: Page = await getJson<Page>(q);
      // Before: every page scanned nothing and answered the same cursor, for good.
      expect(body.entries.length, `page ${page}`).toBeGreaterThan(0);
      expect(body.cursor, `page ${page}`).not.toBe(cursor);
      seen.push(...body.entries.map((e) => e.uuid!));
      cursors.push(body.cursor);
      cursor = body.cursor;
      if (cursor === null) break;
    }
    console.log(`[scans] DLQ of ${HUGE.count} x 900 kB: ${cursors.length} pages, cursors ${JSON.stringify(cursors)}`);
    expect(seen).toEqual([...bigUuids].reverse());
    const newest = bigUuids.at(-1)!;
    const found = await getJson<{ records: Array<{ uuid: string | null }> }>(
      `/api/records?topic=${bigDlq}&uuid=${newest}`,
    );
    expect(found.records.map((r) => r.uuid)).toEqual([newest]);
  }, 60_000);
});

describe("DLQ headers do not choose the metrics' series", () => {
  it(`${SPRAYED} DLQ records, each with a handler header of its own: /api/metrics has at most 64 backlog series, and they add up to ${SPRAYED}`, async () => {
    const name = OBSERVE_METRIC_NAMES.dlqBacklog;
    let lines: string[] = [];
    const sprayTotal = () =>
      lines
        .filter((l) => l.includes(`topic="${sprayTopic}"`))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
    await expect
      .poll(
        async () => {
          const text = await (await fetch(`${app.url}/api/metrics`)).text();
          lines = text.split("\n").filter((l) => l.startsWith(`${name}{`));
          return sprayTotal();
        },
        { timeout: 40_000, interval: 1_000 },
      )
      .toBe(SPRAYED);
    console.log(`[scans] ${SPRAYED} sprayed handler headers: ${lines.length} ${name} series`);
    // Before: one series per handler header, 501 here.
    expect(lines.length).toBeLessThanOrEqual(64);
    expect(lines.every((l) => (l.match(/"[^"]*"/g) ?? []).every((v) => v.length <= 66))).toBe(true);
  }, 60_000);
});

describe("the key actions' Redis budget is not the readers'", () => {
  it("10 anonymous readers hammering /api/keys do not stop a token holder's forget dry run over 300 keys: complete, within 8 s", async () => {
    let reading = true;
    let reads = 0;
    const readers = Array.from({ length: 10 }, async (_, i) => {
      while (reading) {
        const r = await fetch(`${app.url}/api/keys?prefix=${service}:dedup:sparse&count=100`, {
          headers: { "x-forwarded-for": `198.51.100.${i + 1}` },
        }).catch(() => null);
        await r?.arrayBuffer();
        reads++;
      }
    });
    try {
      // Let the readers take the budget first.
      await new Promise((r) => setTimeout(r, 1_000));
      const t0 = performance.now();
      const res = await fetch(`${app.url}/api/keys/forget`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ service, handler: "starved", state: "done", dryRun: true }),
      });
      const ms = performance.now() - t0;
      const body = (await res.json()) as { matched: number; complete: boolean };
      console.log(
        `[scans] forget dry run beside 10 readers (${reads} reads so far): ${ms.toFixed(0)} ms, ${JSON.stringify({ status: res.status, matched: body.matched, complete: body.complete })}`,
      );
      expect(res.status).toBe(200);
      // Before: 10 s waiting for the readers' budget, then `complete: false` with part of the keys.
      expect(body).toMatchObject({ matched: 300, complete: true });
      expect(ms).toBeLessThan(8_000);
    } finally {
      reading = false;
      await Promise.all(readers);
    }
    expect(reads).toBeGreaterThan(20);
  }, 60_000);
});
