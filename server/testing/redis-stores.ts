/**
 * Runs a store-neutral suite of the library on each Redis store it supports: a standalone server
 * with the batch scripts, one with pipelines, and the stack's 3-master Cluster
 * (`DEDUP_TEST_CLUSTER_NODES`, default 127.0.0.1:7000-7002). Each test gets a fresh service prefix;
 * the keys the suite names are deleted after the file (one DEL per key: cluster-safe).
 */
import { Cluster, Redis } from "ioredis";
import { afterAll, describe } from "vitest";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository, type RedisRepositoryOptions } from "@/server/dedup";
import { clusterClient } from "./redis-cluster";

/** One store a suite runs on, with a fresh service prefix. */
export interface RedisStoreUnderTest {
  client: Redis | Cluster;
  repository: RedisRepository;
  service: string;
}

/** Options of {@link onEachRedisStore}. */
export interface RedisStoresOptions {
  /** Prefix of each test's service name (a random suffix is added). */
  servicePrefix: string;
  /** The keys a test with `service` may write, deleted after the file. */
  keysOf: (service: string) => string[];
  /** Repository options of the pipeline variant. @default { batchCommand: "pipeline" } */
  pipeline?: RedisRepositoryOptions;
}

/** `describe(\`${title} on <store>\`, () => suite(fresh))` for each store; `fresh()` is called once per test. */
export function onEachRedisStore(
  title: string,
  options: RedisStoresOptions,
  suite: (fresh: () => RedisStoreUnderTest) => void,
): void {
  const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const nodes = (process.env.DEDUP_TEST_CLUSTER_NODES ?? "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002").split(",");
  const pipeline = options.pipeline ?? { batchCommand: "pipeline" };
  const stores: Array<[string, Redis | Cluster, RedisRepositoryOptions]> = [
    ["standalone Redis (batch scripts)", new Redis(url, RECOMMENDED_IOREDIS_OPTIONS), {}],
    [
      `standalone Redis (pipelines${pipeline.claimCommand ? `, claimCommand ${pipeline.claimCommand}` : ""})`,
      new Redis(url, RECOMMENDED_IOREDIS_OPTIONS),
      pipeline,
    ],
    [
      "a 3-master Redis Cluster",
      clusterClient(
        { enableAutoPipelining: true, redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000 } },
        nodes,
      ),
      {},
    ],
  ];
  const used: Array<{ client: Redis | Cluster; service: string }> = [];
  afterAll(async () => {
    for (const { client, service } of used) for (const k of options.keysOf(service)) await client.call("DEL", k);
    await Promise.all(stores.map(([, client]) => client.quit()));
  });
  for (const [label, client, repoOptions] of stores) {
    describe(`${title} on ${label}`, () => {
      suite(() => {
        const service = `${options.servicePrefix}${Math.random().toString(36).slice(2, 10)}`;
        used.push({ client, service });
        return { client, service, repository: new RedisRepository(client, repoOptions) };
      });
    });
  }
}
