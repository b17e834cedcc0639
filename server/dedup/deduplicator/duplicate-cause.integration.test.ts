/**
 * The duplicate-cause split on Redis: a standalone server (batch scripts, and pipelines with the
 * Lua claim) and the stack's 3-master Cluster (per-node pipelines, one-key scripts).
 */
import { onEachRedisStore } from "@/server/testing/redis-stores";
import { duplicateCauseSuite } from "./duplicate-cause.suite";

onEachRedisStore(
  "duplicate causes",
  {
    servicePrefix: "cause",
    keysOf: (service) => ["a", "b", "c", "x", "p", "q", "old"].map((u) => `${service}:dedup:h:${u}`),
    pipeline: { batchCommand: "pipeline", claimCommand: "lua" },
  },
  (fresh) =>
    duplicateCauseSuite(() => {
      const { client, repository, service } = fresh();
      return { repository, get: (k) => client.get(k), service };
    }),
);
