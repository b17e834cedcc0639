/**
 * UUID lookup on a REAL 3-master Redis Cluster: one script per key sent to the key's own master
 * (auto-pipelined EVALs across slots are refused by ioredis). Keys under a random service name,
 * deleted afterwards. Needs `npm run stack:cluster`; without it the test fails with that instruction.
 */
import { randomBytes } from "node:crypto";
import { Cluster } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseConfig } from "@/server/config";
import { clusterSlot as clusterSlotOf } from "@/server/dedup";
import { createObserveContext, type ObserveContext } from "../context";
import { lookupKey } from "./keys";
import { LocalSource } from "../metrics/local";
import { createObserveRedis, masters, whenReady, type RedisLike } from "../redis/client";

const nodes = process.env.REDIS_CLUSTER_NODES
  ? parseConfig({ REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES }).REDIS_CLUSTER_NODES!
  : ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"];
const SERVICE = `lk${randomBytes(4).toString("hex")}`;
const HANDLERS = ["on-a", "on-b", "on-c", "on-d", "on-e", "on-f"];
const UUID = "01JD8X3Q7ZK4M2N5P6R8S9T0VW";

let client: RedisLike;
let ctx: ObserveContext;
let setupError: Error | null = null;

beforeAll(async () => {
  client = createObserveRedis({ clusterNodes: nodes }, { connectTimeoutMs: 2000, commandTimeoutMs: 5000 });
  try {
    await whenReady(client, 5000);
    if (!(client instanceof Cluster) || masters(client).length < 3)
      throw new Error("expected a Cluster with 3 masters");
    await Promise.all(
      HANDLERS.map((h, i) =>
        i === 5
          ? client.set(`${SERVICE}:dedup:${h}:${UUID}`, "processing:t1")
          : client.set(`${SERVICE}:dedup:${h}:${UUID}`, "done", "PX", 3_600_000),
      ),
    );
    // Make the handlers known the way the app learns them: an inspection under our own prefix.
    ctx = createObserveContext({
      metrics: new LocalSource(new Registry()),
      redis: client,
      prefixes: [`${SERVICE}:dedup:*`],
    });
    await ctx.inspector!.run("exact");
  } catch (e) {
    setupError = e as Error;
  }
}, 60_000);

afterAll(async () => {
  if (client && !setupError) await Promise.all(HANDLERS.map((h) => client.unlink(`${SERVICE}:dedup:${h}:${UUID}`)));
  client?.disconnect();
});

it("finds the UUID under every handler, whichever master holds each key, with state, TTL and size", async () => {
  if (setupError)
    throw new Error(
      `Redis Cluster at ${nodes.join(",")} is not usable (${setupError.message}): run npm run stack:cluster`,
    );
  const r = await lookupKey(ctx, { uuid: UUID });
  expect(r.checkedPrefixes).toBeGreaterThanOrEqual(HANDLERS.length);
  expect(r.matches.map((m) => m.handler).sort()).toEqual(HANDLERS);
  for (const m of r.matches) {
    expect(m.bytes).toBeGreaterThan(0);
    expect(m.state).toBe(m.handler === "on-f" ? "processing" : "done");
    expect(m.handler === "on-f" ? m.ttlMs === -1 : m.ttlMs! > 3_000_000).toBe(true);
  }
  // The six keys really live on more than one master.
  const owners = new Set(
    HANDLERS.map((h) => (client as Cluster).slots[clusterSlotOf(`${SERVICE}:dedup:${h}:${UUID}`)]?.[0]),
  );
  expect(owners.size).toBeGreaterThan(1);
});
