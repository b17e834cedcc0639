/**
 * The state replicas share through PostgreSQL (a database of the test's own): an event recorded by
 * one replica is read by another, and the memory watch of a restarted dashboard goes on from the
 * saved detector state — a held loss keeps the gauge up for its hold instead of resolving.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HandlerKeys } from "@/lib/api/handlers";
import { eventsBetween, recordEvent } from "@/server/observe/shared/events";
import type { KeySource } from "@/server/observe/keys/source";
import { MemoryWatch, WATCH_MIN_INTERVAL_MS } from "@/server/observe/watchers/memory-watch";
import type { RedisLike } from "@/server/observe/redis/client";
import { createOwnDatabase, type OwnDatabase } from "@/server/testing/own-database";
import { setSharedState, SharedState } from "./shared-state";

let db: OwnDatabase;

beforeAll(async () => {
  db = await createOwnDatabase("he_shared_");
}, 15_000);

afterAll(async () => {
  await setSharedState(null);
  await db?.drop();
});

/** A Redis whose `INFO server` says `runId` (a restart: a new run id with a small uptime). */
function fakeRedis(runId: () => string): RedisLike {
  return {
    status: "ready",
    options: { host: "he-redis", port: 1 },
    info: async () => `run_id:${runId()}\r\nuptime_in_seconds:5\r\n`,
  } as unknown as Redis;
}

/** An inspector whose last completed count is `count()`. */
function fakeInspector(count: () => { finishedAt: number; handlers: HandlerKeys[] } | null): KeySource {
  return {
    kind: "redis",
    prefixes: [],
    busy: false,
    current: () => ({ result: count() }),
    refresh: () => ({ started: true, retryAfterMs: 0 }),
    ensureFresh: () => undefined,
  } as unknown as KeySource;
}

const handler = (keyCount: number) =>
  ({
    service: "he-svc",
    handler: "h",
    keyCount,
    errorBound: 0,
    ttlBuckets: [{ label: "x", minMs: 3_600_000, maxMs: 86_400_000, count: keyCount, processing: 0 }],
  }) as unknown as HandlerKeys;

describe("state shared by the replicas in PostgreSQL", () => {
  it("an event recorded through one replica is in another's events", async () => {
    await setSharedState(new SharedState(db.url));
    const at = Date.now();
    await recordEvent("rebalance", "he rebalance of g: 1 → 2 members", { consumergroup: "he-g" }, at);
    // Another process: its own pool on the same database.
    await setSharedState(new SharedState(db.url));
    const seen = (await eventsBetween(at - 1000, at + 1000)).filter((e) => e.labels.consumergroup === "he-g");
    expect(seen.map((e) => [e.kind, e.title, e.at])).toEqual([["rebalance", "he rebalance of g: 1 → 2 members", at]]);
  });

  it("a dedup memory loss stays on the gauge after the dashboard restarts", async () => {
    await setSharedState(new SharedState(db.url));
    let run = "a";
    let count: { finishedAt: number; handlers: HandlerKeys[] } | null = {
      finishedAt: Date.now(),
      handlers: [handler(400)],
    };
    const redis = fakeRedis(() => run);
    const first = new MemoryWatch(
      redis,
      fakeInspector(() => count),
    );
    await first.poll();
    // Redis restarted empty.
    run = "b";
    count = { finishedAt: Date.now() + 1, handlers: [] };
    await new Promise((r) => setTimeout(r, WATCH_MIN_INTERVAL_MS + 50));
    await first.poll();
    expect(first.gaugeValues()).toEqual([{ labels: { service: "he-svc", handler: "h" }, value: 1 }]);
    expect(first.state().losses.map((l) => [l.handler, l.share, l.cause])).toEqual([["h", 1, "restart"]]);

    // The dashboard restarts: a new process, a new watch; the consumers already wrote keys again.
    await setSharedState(new SharedState(db.url));
    count = { finishedAt: Date.now() + 2, handlers: [handler(30)] };
    const second = new MemoryWatch(
      redis,
      fakeInspector(() => count),
    );
    await second.poll();
    expect(second.gaugeValues()).toEqual([{ labels: { service: "he-svc", handler: "h" }, value: 1 }]);
    // Without the saved state (no DATABASE_URL) the restarted watch takes the refilled count as its baseline: the alert resolves.
    await setSharedState(null);
    const memoryOnly = new MemoryWatch(
      redis,
      fakeInspector(() => count),
    );
    await memoryOnly.poll();
    expect(memoryOnly.gaugeValues()).toEqual([{ labels: { service: "he-svc", handler: "h" }, value: 0 }]);
  }, 15_000);
});
