/**
 * Redis latency raised above the Deduplicator's check timeout (a delaying proxy
 * in front of the suite's redis-server): each handler's failure mode applies — fail-open passes
 * every message to the handler, fail-closed retries and then sends it to the DLQ — and the errors
 * are counted as `redis_timeout`, never `redis_conn`. The reverse holds too: a Redis that refuses
 * connections is `redis_conn`, not `redis_timeout` (the dashboard's error-reason panel tells an SRE
 * "slow" from "down" by this label).
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failOpen, deduplicator, dedupMetrics, RedisRepository } from "@/server/dedup";
import { createDedupRedis } from "@/server/dedup-redis";
import { account, KafkaCase, npmDlqReplay, reportAccounting } from "./lib/cases";
import { LatencyProxy } from "./lib/latency-proxy";
import { freePort } from "./lib/procs";
import { FaultRedis } from "./lib/redis";
import {
  counterValue,
  event,
  publishStream,
  readDlq,
  startWorker,
  waitUntil,
  WORKER_DEFAULTS,
  type Worker,
} from "./lib/stream";

// One partition, so that the fail-closed handler's chunk is long for sure: 30 messages × (3 timed-out
// attempts + 0.4 s + 0.8 s of backoff) ≈ 45 s, beyond the 10 s group session.
const M = 30;
const TIMEOUT_MS = 100;
const LATENCY_MS = 400;

describe(`case 4: Redis latency ${LATENCY_MS} ms above the ${TIMEOUT_MS} ms check timeout`, () => {
  const fault = new KafkaCase("latency", { partitions: 1, handlers: ["fail-open", "fail-closed"] });
  const { id, topic, dlqTopic, ledger } = fault;
  let proxy: LatencyProxy;
  let worker: Worker | undefined;

  beforeAll(async () => {
    await fault.setup();
    proxy = await LatencyProxy.start(fault.redis.port);
  });

  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    await fault.teardown();
  });

  it("fail-open passes every message, fail-closed DLQs it after its retries, all counted as redis_timeout; replayed once latency is back", async () => {
    const t0 = Date.now();
    const metricsPort = await freePort();
    worker = startWorker({
      ...WORKER_DEFAULTS,
      replica: `latency-${id}`,
      redisUrl: proxy.url,
      schema: ledger.schema,
      topic,
      dlqTopic,
      metricsPort,
      timeoutMs: TIMEOUT_MS,
      retry: { maxRetries: 2, initialIntervalMs: 400, maxIntervalMs: 800, multiplier: 2, randomizationFactor: 0 },
      handlers: [
        { name: "fail-open", mode: "open", groupId: `faults.${id}.open` },
        { name: "fail-closed", mode: "closed", groupId: `faults.${id}.closed` },
      ],
    });
    await worker.ready;
    proxy.delayMs = LATENCY_MS;
    const published = await publishStream(topic, M);
    const settled = async () => {
      if ((await ledger.count("fail-open")) < M) return false;
      return (await account(ledger, "fail-closed", published.ids, await readDlq(dlqTopic))).lost === 0;
    };
    expect(await waitUntil(settled, 240_000, 2000)).toBe(true);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    const dlq = await readDlq(dlqTopic);
    const open = await account(ledger, "fail-open", published.ids, dlq);
    const closed = await account(ledger, "fail-closed", published.ids, dlq);
    const timeouts = counterValue(metrics, "deduplication_errors_total", { reason: "redis_timeout" });
    const conn = counterValue(metrics, "deduplication_errors_total", { reason: "redis_conn" });
    const during = (Date.now() - t0) / 1000;

    expect(open.processed).toBe(M);
    expect(open.dlq).toBe(0);
    expect(closed.lost).toBe(0);
    expect(closed.dlqIds).toBe(M - closed.processed);
    expect(closed.dlqIds).toBeGreaterThan(0);
    for (const d of dlq.filter((x) => x.handler === "fail-closed")) expect(d.reason).toMatch(/\(redis_timeout\)/);
    expect(timeouts).toBeGreaterThan(0);
    expect(conn).toBe(0);

    proxy.delayMs = 0;
    await npmDlqReplay(dlqTopic, topic);
    expect(await waitUntil(async () => (await ledger.count("fail-closed")) >= M, 120_000, 1000)).toBe(true);
    const after = await account(ledger, "fail-closed", published.ids, []);
    const note = `deduplication_errors_total redis_timeout=${timeouts} redis_conn=${conn}`;
    reportAccounting("4 redis-latency fail-open", M, open, { lost: open.lost, dlq: open.dlq, seconds: during, note });
    reportAccounting("4 redis-latency fail-closed + dlq:replay", M, after, {
      lost: after.unprocessed,
      dlq: closed.dlq,
      seconds: (Date.now() - t0) / 1000,
      note: `${note}; ${closed.dlqIds} distinct messages in the DLQ`,
    });
    expect(after.unprocessed).toBe(0);
    expect(after.duplicateSideEffects).toBe(0);
    // Each poisoned message is in the DLQ once, although the chunk of fail-closed messages that
    // each spend their retry budget outlasts the group session: the member must stay in its group
    // (heartbeats while the chunk runs), or it is evicted, its commits are refused and the chunk is
    // poisoned again.
    expect(closed.dlq, `${closed.dlq} DLQ entries for ${closed.dlqIds} messages`).toBe(closed.dlqIds);
  });

  it("a Redis that is down (connection refused) is counted as redis_conn, not redis_timeout", async () => {
    const down = await FaultRedis.start("down");
    const client = createDedupRedis({ url: down.url }, "faults-down");
    const registry = new Registry();
    try {
      await client.ping();
      await down.down();
      const handle = deduplicator({ repository: failOpen(new RedisRepository(client)), service: "faults", registry })(
        async () => undefined,
      );
      for (let i = 0; i < 5; i++) {
        const m = event(i);
        m.context = { topic: "t", handler: "h" };
        await handle(m);
        await new Promise((r) => setTimeout(r, 300));
      }
      const byReason = Object.fromEntries(
        (await dedupMetrics(registry).errors.get()).values.map((v) => [v.labels.reason, v.value]),
      );
      expect(byReason.redis_conn ?? 0, JSON.stringify(byReason)).toBeGreaterThan(0);
      expect(byReason.redis_timeout ?? 0, `a stopped Redis reads as slow: ${JSON.stringify(byReason)}`).toBe(0);
    } finally {
      client.disconnect();
      await down.close();
    }
  });
});
