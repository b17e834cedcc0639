/**
 * The duplicate-cause split on Redis: a standalone server (batch scripts, and pipelines) and the
 * stack's 3-master Cluster (per-node pipelines, one-key scripts). Each test uses a fresh service
 * prefix and deletes its keys (one DEL per key: cluster-safe).
 */
import { Cluster, Redis } from "ioredis";
import { clusterClient } from "@/server/testing/redis-cluster";
import { afterAll, describe } from "vitest";
import { duplicateCauseSuite } from "./duplicate-cause.suite";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository, type RedisRepositoryOptions } from "./redis-repository";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const CLUSTER_NODES = (process.env.DEDUP_TEST_CLUSTER_NODES ?? "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002").split(",");

const clients: Array<Redis | Cluster> = [];
const services: Array<{ client: Redis | Cluster; service: string }> = [];
afterAll(async () => {
  for (const { client, service } of services) {
    const keys = ["a", "b", "c", "x", "p", "q", "old"].map((u) => `${service}:dedup:h:${u}`);
    for (const k of keys) await client.call("DEL", k);
  }
  await Promise.all(clients.map((c) => c.quit()));
});

function suite(label: string, client: Redis | Cluster, options: RedisRepositoryOptions = {}): void {
  clients.push(client);
  describe(`duplicate causes on ${label}`, () => {
    duplicateCauseSuite(() => {
      const service = `cause${Math.random().toString(36).slice(2, 10)}`;
      services.push({ client, service });
      return { repository: new RedisRepository(client, options), get: (k) => client.get(k), service };
    });
  });
}

suite("standalone Redis (batch scripts)", new Redis(REDIS_URL, RECOMMENDED_IOREDIS_OPTIONS));
suite("standalone Redis (pipelines, claimCommand lua)", new Redis(REDIS_URL, RECOMMENDED_IOREDIS_OPTIONS), { batchCommand: "pipeline", claimCommand: "lua" });
const cluster = clusterClient({ enableAutoPipelining: true, redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000 } }, CLUSTER_NODES);
suite("a 3-master Redis Cluster", cluster);
