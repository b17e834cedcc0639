/**
 * The sampled estimate on a private redis-server (random port, stopped by pid), through the app's
 * own client (auto-pipelining on): its two calls in flight reach Redis one at a time, each within
 * its budget, and the counts land within their stated bounds.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrefixGlobs } from "./glob";
import { estimateKeys } from "./inspector-estimate";
import { resolveKeyInspectorOptions } from "./inspector-options";
import { createObserveRedis, masters, whenReady, type RedisLike } from "../redis/client";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { seedKeys, type SeedGroup } from "@/server/testing/seed-keys";

const H = 3_600_000;
const GROUPS: SeedGroup[] = [
  { prefix: "notification:dedup:on-review-created", count: 30_000, ttlMs: 24 * H },
  { prefix: "billing:dedup:charge", count: 20_000, ttlMs: 24 * H },
  { prefix: "cache:user", count: 10_000, ttlMs: H },
];

let srv: OwnRedis;
let admin: Redis;
let client: RedisLike;

const readsProcessed = async () => Number(/^total_reads_processed:(\d+)/m.exec(await admin.info("stats"))![1]);

beforeAll(async () => {
  srv = await startOwnRedis({ realtime: true });
  admin = new Redis(srv.url);
  await seedKeys(admin, GROUPS);
  client = createObserveRedis({ url: srv.url });
  await whenReady(client, 2000);
}, 60_000);

afterAll(async () => {
  client?.disconnect();
  admin?.disconnect();
  await srv?.stop();
});

describe("the sampled estimate", () => {
  it("sends its calls one at a time: Redis reads and runs each on its own, never two budgeted calls back to back", async () => {
    const opts = resolveKeyInspectorOptions({});
    const nodes = masters(client);
    const size = await admin.dbsize();
    const before = await readsProcessed();
    const est = await estimateKeys(nodes, [size], opts, new PrefixGlobs(opts.prefixes));
    // One read for each call (and one for the INFO below): two calls arriving together would be
    // read, and run, in one go, with no other client served between them.
    const reads = (await readsProcessed()) - before - 1;
    expect(est.calls).toBeGreaterThan(20);
    expect(reads / est.calls, `${reads} reads for ${est.calls} calls`).toBeGreaterThanOrEqual(0.9);
    expect(est.draws).toBeGreaterThanOrEqual(opts.estimateSamples);
    for (const g of GROUPS.slice(0, 2)) {
      const a = est.accums.get(g.prefix)!;
      const bound = est.bounds.get(g.prefix)!;
      expect(Math.abs(a.count - g.count), `${g.prefix}: ${a.count} ± ${bound}`).toBeLessThanOrEqual(bound);
    }
  });
});
