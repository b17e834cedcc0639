/**
 * Redis stopped for 30 s during a 50,000-message stream. One stream, two
 * handlers in their own consumer groups of one worker: `fail-open` (spec §4 default) and
 * `fail-closed`. Fail-open: consumption continues during the outage, 0 lost. Fail-closed: 0 lost,
 * 0 duplicate side effects, what exhausted its retries is in the DLQ with a reason; then
 * `npm run dlq:replay` republishes it to the original topic and afterwards nothing is unprocessed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { account, KafkaCase, npmDlqReplay, reportAccounting, SCALE, scaled } from "./lib/cases";
import { freePort, sleep } from "./lib/procs";
import {
  counterValue,
  publishStream,
  readDlq,
  startWorker,
  waitUntil,
  WORKER_DEFAULTS,
  type Worker,
} from "./lib/stream";

const N = scaled(50_000);
const OUTAGE_MS = 30_000;
const OPEN = "fail-open";
const CLOSED = "fail-closed";

describe(`case 1: Redis stopped for ${OUTAGE_MS / 1000} s during a ${N}-message stream`, () => {
  const fault = new KafkaCase("outage", { partitions: 6, handlers: [OPEN, CLOSED], redis: { persist: true } });
  const { id, topic, dlqTopic, ledger } = fault;
  let worker: Worker | undefined;
  let metricsPort = 0;

  beforeAll(async () => {
    await fault.setup();
    metricsPort = await freePort();
  });

  afterAll(async () => {
    await worker?.stop();
    await fault.teardown();
  });

  it("fail-open keeps consuming and loses nothing; fail-closed loses nothing, duplicates nothing, DLQs what ran out of retries; after dlq:replay nothing is unprocessed", async () => {
    const t0 = Date.now();
    worker = startWorker({
      ...WORKER_DEFAULTS,
      replica: `outage-${id}`,
      redisUrl: fault.redis.url,
      schema: ledger.schema,
      topic,
      dlqTopic,
      metricsPort,
      handlers: [
        { name: OPEN, mode: "open", groupId: `faults.${id}.open` },
        { name: CLOSED, mode: "closed", groupId: `faults.${id}.closed` },
      ],
    });
    await worker.ready;
    const publishing = publishStream(topic, N);

    // The outage starts once a fifth of the stream went through the fail-open handler.
    expect(await waitUntil(async () => (await ledger.count(OPEN)) >= N / 5, 300_000)).toBe(true);
    await fault.redis.down();
    const outageAt = Date.now();
    const openBefore = await ledger.count(OPEN);
    const closedBefore = await ledger.count(CLOSED);
    await sleep(OUTAGE_MS);
    const openDuring = (await ledger.count(OPEN)) - openBefore;
    const closedDuring = (await ledger.count(CLOSED)) - closedBefore;
    await fault.redis.up();
    console.log(
      `[faults] case 1: Redis down ${((Date.now() - outageAt) / 1000).toFixed(1)} s; pushed during it: fail-open ${openDuring}, fail-closed ${closedDuring}`,
    );
    const published = await publishing;

    // Everything is either pushed or (fail-closed) in the DLQ.
    const settled = async () => {
      if ((await ledger.count(OPEN)) < N) return false;
      const dlq = await readDlq(dlqTopic);
      return (await account(ledger, CLOSED, published.ids, dlq)).lost === 0;
    };
    expect(await waitUntil(settled, 400_000, 3000)).toBe(true);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    const dlq = await readDlq(dlqTopic);
    const open = await account(ledger, OPEN, published.ids, dlq);
    const closed = await account(ledger, CLOSED, published.ids, dlq);
    const reasons = {
      redis_conn: counterValue(metrics, "deduplication_errors_total", { reason: "redis_conn" }),
      redis_timeout: counterValue(metrics, "deduplication_errors_total", { reason: "redis_timeout" }),
    };
    const closedDlq = dlq.filter((d) => d.handler === CLOSED);

    // Fail-open: kept consuming through the outage, nothing lost, nothing in the DLQ.
    expect(openDuring).toBeGreaterThan(0);
    expect(open.lost, `lost: ${open.lostSample.join(", ")}`).toBe(0);
    expect(open.unprocessed).toBe(0);
    expect(open.dlq).toBe(0);
    expect(open.duplicateSideEffects).toBe(0);
    // Fail-closed: the outage sent messages past the retry budget to the DLQ, each with the store reason.
    expect(closed.lost, `lost: ${closed.lostSample.join(", ")}`).toBe(0);
    expect(closed.duplicateSideEffects).toBe(0);
    expect(closedDlq.length).toBeGreaterThan(0);
    for (const d of closedDlq) expect(d.reason).toMatch(/dedup store failed \((redis_conn|redis_timeout)\)/);
    expect(reasons.redis_conn + reasons.redis_timeout).toBeGreaterThan(0);
    const beforeReplay = (Date.now() - t0) / 1000;

    // npm run dlq:replay → original topic → every published message pushed exactly once.
    const out = await npmDlqReplay(dlqTopic, topic);
    console.log(
      `[faults] case 1: ${out
        .split("\n")
        .filter((l) => l.includes("[dlq:replay]"))
        .join(" ")}`,
    );
    expect(out).toMatch(new RegExp(`replayed ${closedDlq.length} `));
    expect(await waitUntil(async () => (await ledger.count(CLOSED)) >= N, 180_000, 1000)).toBe(true);
    const after = await account(ledger, CLOSED, published.ids, []);
    const openAfter = await account(ledger, OPEN, published.ids, []);
    const seconds = (Date.now() - t0) / 1000;
    const note = `${published.records} records, Redis down ${OUTAGE_MS / 1000} s; errors redis_conn=${reasons.redis_conn} redis_timeout=${reasons.redis_timeout}${SCALE !== 1 ? `; FAULTS_SCALE=${SCALE}` : ""}`;
    reportAccounting("1 redis-outage fail-open", N, openAfter, {
      lost: openAfter.lost,
      dlq: open.dlq,
      seconds: beforeReplay,
      note: `${openDuring} pushed during the outage; ${note}`,
    });
    reportAccounting("1 redis-outage fail-closed + dlq:replay", N, after, {
      lost: after.unprocessed,
      dlq: closedDlq.length,
      seconds,
      note: `${closed.processed} processed before the replay, ${closedDlq.length} replayed; ${note}`,
    });
    expect(after.unprocessed).toBe(0);
    expect(after.duplicateSideEffects).toBe(0);
    // The replayed copies reached the fail-open group too: swallowed, no second push.
    expect(openAfter.duplicateSideEffects).toBe(0);
  });
});
