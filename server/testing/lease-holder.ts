/**
 * A consumer replica as its own process that takes leases and holds them: `npx tsx
 * server/testing/lease-holder.ts <redisUrl> <service> <handler> <n> <metricsPort>` runs the
 * Deduplicator (lease marking, RedisRepository) over `n` messages whose handler never returns, so
 * their `processing:<hostname>-<pid>/…` leases stay in Redis, and serves its `dedup_consumer_info`
 * on `/metrics` as a replica does. Prints `ready <replica id>` once the leases are taken. A test
 * SIGKILLs it to leave a dead owner's leases behind (stuck until their TTL).
 */
import { createServer } from "node:http";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { Deduplicator, RedisRepository } from "@/server/dedup";
import { consumerInfoGauge, processReplicaId } from "@/server/transport/replica-id";

const [url, service, handler, n, port] = process.argv.slice(2) as [string, string, string, string, string];
const registry = new Registry();
consumerInfoGauge(registry).set({ service, replica: processReplicaId() }, 1);
createServer(
  (_req, res) =>
    void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text)),
).listen(Number(port), "127.0.0.1");
const redis = new Redis(url);
const dedup = new Deduplicator({ repository: new RedisRepository(redis), service, registry, leaseMs: 600_000 });
const run = dedup.middleware(() => new Promise<void>(() => undefined));
for (let i = 0; i < Number(n); i++) {
  void run({
    uuid: `${processReplicaId()}-${i}`,
    metadata: {},
    payload: Buffer.from("{}"),
    signal: new AbortController().signal,
    context: { handler },
  });
}
const keys = Array.from({ length: Number(n) }, (_, i) => `${service}:dedup:${handler}:${processReplicaId()}-${i}`);
const poll = setInterval(() => {
  void redis.exists(...keys).then((have) => {
    if (have !== keys.length) return;
    clearInterval(poll);
    process.stdout.write(`ready ${processReplicaId()}\n`);
  });
}, 100);
