/**
 * The Kafka broker (the suite's own, 127.0.0.1:19092) restarted mid-stream. The
 * worker process is not touched: it must reconnect by itself and push every message, 0 lost, 0
 * duplicate side effects. The publisher keeps publishing through the restart (retrying a batch the
 * broker did not acknowledge, which may write it twice: more duplicates for the consumer to absorb).
 */
import { describe, expect, it } from "vitest";
import { account, KafkaCase, reportAccounting, SCALE, scaled } from "./lib/cases";
import { brokerPid, startBroker, stopBroker } from "./lib/kafka";
import { sleep } from "./lib/procs";
import { publishStream, readDlq, startWorker, waitUntil, WORKER_DEFAULTS, type Worker } from "./lib/stream";

const N = scaled(20_000);
const DOWN_MS = 5_000;

describe(`case 3: the Kafka broker restarted during a ${N}-message stream`, () => {
  const fault = new KafkaCase("broker", { partitions: 6, handlers: ["on-review-created"] });
  const { id, topic, dlqTopic, ledger } = fault;
  let worker: Worker | undefined;

  fault.hooks(async () => {
    await worker?.stop();
    // Whatever happened, the suite's broker runs again for the next case.
    if (brokerPid() === null) await startBroker();
  });

  it("the consumer reconnects by itself: 0 lost, 0 duplicate side effects", async () => {
    const t0 = Date.now();
    worker = startWorker({
      ...WORKER_DEFAULTS,
      replica: `broker-${id}`,
      redisUrl: fault.redis.url,
      schema: ledger.schema,
      topic,
      dlqTopic,
      handlers: [{ name: "on-review-created", mode: "open", groupId: `faults.${id}` }],
    });
    await worker.ready;
    const publishing = publishStream(topic, N, { ratePerSec: 1000 });
    publishing.catch(() => undefined);
    expect(await waitUntil(async () => (await ledger.count("on-review-created")) >= N / 4, 180_000, 250)).toBe(true);
    const oldPid = brokerPid();
    const downAt = Date.now();
    await stopBroker();
    await sleep(DOWN_MS);
    const broker = await startBroker();
    const downFor = (Date.now() - downAt) / 1000;
    console.log(
      `[faults] case 3: broker pid ${oldPid} stopped, pid ${broker.pid} serving again after ${downFor.toFixed(1)} s`,
    );
    const published = await publishing;
    const unique = new Set(published.ids).size;
    const reconnected = await waitUntil(async () => (await ledger.count("on-review-created")) >= unique, 240_000, 1000);
    const dlq = await readDlq(dlqTopic);
    const a = await account(ledger, "on-review-created", published.ids, dlq);
    reportAccounting("3 broker restart", unique, a, {
      lost: a.unprocessed,
      dlq: dlq.length,
      seconds: (Date.now() - t0) / 1000,
      note: `${published.records} records; broker unavailable ${downFor.toFixed(1)} s; worker pid ${worker.pid} ${worker.alive() ? "kept running" : "EXITED"}${SCALE !== 1 ? `; FAULTS_SCALE=${SCALE}` : ""}`,
    });
    expect(worker.alive(), `the worker exited:\n${worker.logs().slice(-2000)}`).toBe(true);
    expect(reconnected).toBe(true);
    expect(a.unprocessed).toBe(0);
    expect(a.duplicateSideEffects).toBe(0);
    expect(dlq).toEqual([]);
  });
});
